"""A deployment's OpenAPI document read into profile overrides: paths, methods, body field names, envelopes."""

from __future__ import annotations

import pytest
import yaml

from payconform.contract import Contract, deep_merge
from payconform.profile.bodies import rename
from payconform.profile.document import DocumentError
from payconform.profile.openapi import map_document, unshown
from payconform.profile.resolve import fold_document
from payconform.target import Target, TargetConfigError

BASE = "https://api.example.com/business/api/v1"
ORG = "/payments/organizations/{organizationId}"

DOCUMENT = {
    "openapi": "3.1.0",
    "servers": [{"url": "https://api.example.com/business/api/v1"}],
    "paths": {
        f"{ORG}/payouts/quote": {"post": {
            "operationId": "pricePayout",
            "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Price"}}}}}},
        f"{ORG}/corridors": {"get": {
            "operationId": "listCorridors",
            "responses": {"200": {"content": {"application/json": {"schema": {
                "type": "object", "properties": {"corridors": {"type": "array", "items": {}}}}}}}}}},
        "/recipients/{orgId}": {
            "get": {"operationId": "listBeneficiaries",
                    "parameters": [{"name": "page_token", "in": "query", "schema": {"type": "string"}}],
                    "responses": {"200": {"content": {"application/json": {"schema": {
                        "$ref": "#/components/schemas/RecipientPage"}}}}}},
            "post": {"operationId": "createBeneficiary",
                     "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                         k: {"type": "string"} for k in ("name", "email", "phone", "country", "type", "externalId",
                                                         "paymentMethod")}}}}}}},
        "/checkout/organizations/{orgId}/links/{id}": {"put": {"operationId": "updateCheckoutLink"}},
        f"{ORG}/payouts/runs": {"post": {
            "operationId": "createPayoutBatch",
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                "externalReferenceId": {"type": "string"},
                "items": {"type": "array", "items": {"$ref": "#/components/schemas/Line"}}}}}}}}},
    },
    "components": {"schemas": {
        "Price": {"type": "object", "required": ["recipientAccountId", "amount", "sourceCurrency"],
                  "properties": {"recipientAccountId": {"type": "string"}, "amount": {"type": "string"},
                                 "sourceCurrency": {"type": "string"}, "destinationCurrency": {"type": "string"}}},
        "RecipientPage": {"allOf": [{"type": "object", "properties": {"results": {"type": "array", "items": {}}}},
                                    {"properties": {"nextPageToken": {"type": "string"}}}]},
        "Line": {"type": "object", "properties": {k: {"type": "string"} for k in (
            "destinationAccountId", "amount", "sourceCurrency", "destinationCurrency", "reference")}},
    }},
}


@pytest.fixture(scope="module")
def profile() -> dict:
    return Contract.load().profile


@pytest.fixture(scope="module")
def mapped(profile):
    return map_document(DOCUMENT, profile, BASE)


def test_the_not_shown_operations_are_the_profile_chosen_ones(profile):
    names = unshown(profile)
    assert {"pricePayout", "sendPayout", "listCorridors", "fundSandbox", "createCheckoutLink",
            "createBeneficiary", "createPayoutLink", "createPayoutBatch", "listBalanceTransactions"} <= set(names)
    assert "getBalance" not in names  # the spec shows it whole


def test_paths_are_relative_to_the_base_url_with_the_profiles_placeholder_names(mapped):
    ops = mapped.overrides["operations"]
    assert ops["pricePayout"]["path"] == "/payments/organizations/{orgId}/payouts/quote"
    assert ops["updateCheckoutLink"] == {"method": "PUT"}  # {id} read as {linkId}: the profile's own path
    assert any("{id} as {linkId}" in n for n in mapped.notes)
    assert "path" not in ops.get("listCorridors", {})  # the same path as the profile's: nothing to override
    assert any("{organizationId} as {orgId}" in n for n in mapped.notes)


def test_a_spec_shown_path_is_never_overridden(mapped):
    assert "path" not in mapped.overrides["operations"]["createPayoutBatch"]


def test_body_fields_are_renamed_only_where_unambiguous(mapped):
    ops = mapped.overrides["operations"]
    assert ops["pricePayout"]["body_fields"] == {"destinationAccountId": "recipientAccountId", "sourceAmount": "amount"}
    assert ops["createPayoutBatch"]["body_fields"] == {"items[].sourceAmount": "amount"}
    assert "body_fields" not in ops.get("createBeneficiary", {})  # the same names as the profile's body


def test_list_envelopes_come_from_the_answer_schema(mapped):
    ops = mapped.overrides["operations"]
    assert ops["listCorridors"]["page"] == {"items": "corridors"}
    assert ops["listBeneficiaries"]["page"] == {"items": "results", "cursor": "nextPageToken",
                                                "cursor_param": "page_token"}


def test_a_missing_operation_is_said_and_left_to_the_profile(mapped):
    assert "sendPayout" not in mapped.overrides["operations"]
    assert any(n.startswith("operations.sendPayout: the document has no operationId sendPayout") for n in mapped.notes)
    assert any(n.startswith("operations.updateCheckoutLink.body: the document shows no JSON request body")
               for n in mapped.notes)


def test_the_merged_profile_puts_the_target_files_entries_over_the_documents(tmp_path, profile):
    (tmp_path / "openapi.yaml").write_text(yaml.safe_dump(DOCUMENT), encoding="utf-8")
    (tmp_path / "target.yaml").write_text(yaml.safe_dump({
        "base_url": BASE, "org_id": "abc", "credentials": {"api_key": "svc_test_x"}, "openapi": "openapi.yaml",
        "profile": {"operations": {"listCorridors": {"page": {"items": "rows"}}}}}), encoding="utf-8")
    target = Target.load(tmp_path / "target.yaml")
    assert target.openapi == str(tmp_path / "openapi.yaml")  # relative to the target file
    notes = fold_document(target)
    assert notes and target.openapi is None
    merged = deep_merge(profile, target.profile)
    assert merged["operations"]["pricePayout"]["path"] == "/payments/organizations/{orgId}/payouts/quote"
    assert merged["operations"]["pricePayout"]["idempotency"] == "none"  # the default's entry, kept
    assert merged["operations"]["listCorridors"]["page"]["items"] == "rows"  # the target file wins
    assert "openapi" not in target.to_dict()


def test_an_unreadable_document_makes_the_target_unusable(tmp_path):
    target = Target.load(overrides={"base_url": BASE, "org_id": "abc", "openapi": str(tmp_path / "none.json")})
    with pytest.raises(DocumentError, match="none.json: cannot read it"):
        fold_document(target)
    (tmp_path / "bad.json").write_text('{"openapi": "3.1.0"}', encoding="utf-8")
    target.openapi = str(tmp_path / "bad.json")
    with pytest.raises(DocumentError, match="no `paths` mapping"):
        fold_document(target)


def test_a_document_url_off_the_targets_host_is_refused():
    with pytest.raises(TargetConfigError, match="not on the target's host"):
        Target.load(overrides={"base_url": BASE, "org_id": "abc", "openapi": "https://elsewhere.example/o.json"})


def test_the_client_sends_the_deployments_names():
    body = {"externalReferenceId": "r", "items": [{"sourceAmount": "1.00", "reference": "a"},
                                                  {"sourceAmount": "2.00", "reference": "b"}]}
    sent = rename(body, {"items[].sourceAmount": "amount", "externalReferenceId": "ref"})
    assert sent == {"ref": "r", "items": [{"amount": "1.00", "reference": "a"}, {"amount": "2.00", "reference": "b"}]}
    assert body["items"][0] == {"sourceAmount": "1.00", "reference": "a"}  # the caller's body is unchanged
