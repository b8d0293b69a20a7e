"""Unit tests of payconform.fuzz.walk_bodies: the walks' request bodies follow the profile's example bodies."""

from __future__ import annotations

import re

import jsonschema
import pytest

from payconform import placeholders
from payconform.fuzz import walk_bodies
from payconform.contract import run_contract

LINE = {"destinationAccountId": "{destinationAccountId}", "sourceAmount": "10.00", "reference": "{unique}-1"}
EXAMPLES = {
    "createThing": {"name": "{unique}", "account": "{unique digits}0000", "kind": "fiat", "enabled": False},
    "createRun": {"externalReferenceId": "{unique}", "items": [LINE]},
    "confirm": {"hash": "0x{64 hex digits; last four pick the outcome}"},
}
DOCUMENT = {
    "openapi": "3.1.0",
    "components": {"schemas": {"Line": {"type": "object", "properties": {"destinationAccountId": {"type": "string",
                                                                                                   "minLength": 3}}}}},
    "paths": {"/things": {"post": {"operationId": "createThing", "requestBody": {"content": {"application/json": {
                  "schema": {"type": "object"}}}}}},
              "/runs": {"post": {"operationId": "createRun", "requestBody": {"content": {"application/json": {
                  "schema": {"type": "object", "properties": {"items": {"type": "array",
                                                                       "items": {"$ref": "#/components/schemas/Line"}}}}}}}},
                        "get": {"operationId": "listRuns"}},
              "/confirm": {"post": {"operationId": "confirm", "requestBody": {"content": {"application/json": {
                  "schema": {"type": "object"}}}}}},
              "/other": {"post": {"operationId": "other", "requestBody": {"content": {"application/json": {
                  "schema": {"type": "object", "required": ["x"]}}}}}}},
}


def body_schema(document: dict, path: str) -> dict:
    return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


@pytest.fixture
def narrowed() -> dict:
    return walk_bodies.narrow(DOCUMENT, EXAMPLES.get)


def test_fixed_values_are_sent_as_they_are_and_fresh_ones_follow_a_pattern(narrowed: dict) -> None:
    schema = body_schema(narrowed, "/things")
    assert schema["required"] == ["name", "account", "kind", "enabled"] and schema["additionalProperties"] is False
    assert schema["properties"]["kind"] == {"const": "fiat"} and schema["properties"]["enabled"] == {"const": False}
    assert re.fullmatch(schema["properties"]["account"]["pattern"].strip("^$"), "123456780000")
    assert body_schema(narrowed, "/confirm")["properties"]["hash"]["pattern"] == "^0x[0-9a-f]{64}$"


def test_a_value_only_a_test_knows_keeps_the_contracts_schema(narrowed: dict) -> None:
    line = body_schema(narrowed, "/runs")["properties"]["items"]["items"]
    assert line["properties"]["destinationAccountId"] == {"type": "string", "minLength": 3}
    assert line["properties"]["sourceAmount"] == {"const": "10.00"}


def test_operations_without_an_example_and_the_original_document_are_untouched(narrowed: dict) -> None:
    assert body_schema(narrowed, "/other") == {"type": "object", "required": ["x"]}
    assert body_schema(DOCUMENT, "/things") == {"type": "object"}


def test_refresh_gives_fresh_values_that_still_match_the_narrowed_schema(narrowed: dict) -> None:
    schema = body_schema(narrowed, "/runs")
    sent = {"externalReferenceId": "pcw-000000000000",
            "items": [{"destinationAccountId": "abc", "sourceAmount": "10.00", "reference": "pcw-000000000000-1"}]}
    jsonschema.validate(sent, schema)
    first, second = (walk_bodies.refresh(sent, EXAMPLES["createRun"]) for _ in range(2))
    for body in (first, second):
        jsonschema.validate(body, schema)
        assert body["items"][0]["destinationAccountId"] == "abc"
    assert first["externalReferenceId"] != second["externalReferenceId"] != sent["externalReferenceId"]
    thing = walk_bodies.refresh({"name": "pcw-000000000000", "account": "100000000000", "kind": "fiat",
                                 "enabled": False}, EXAMPLES["createThing"])
    jsonschema.validate(thing, body_schema(narrowed, "/things"))


def test_every_profile_body_narrows_to_a_valid_schema() -> None:
    contract = run_contract()
    operations = contract.profile.get("operations") or {}
    for name, op in operations.items():
        body = op.get("body") if isinstance(op, dict) else None
        if body is not None:
            document = {"paths": {"/x": {"post": {"operationId": name, "requestBody": {"content": {
                "application/json": {"schema": {}}}}}}}}
            jsonschema.Draft202012Validator.check_schema(body_schema(walk_bodies.narrow(document, {name: body}.get),
                                                                     "/x"))


def test_fresh_values_match_their_patterns() -> None:
    for prefix in ("pc", "pcw"):
        patterns = placeholders.fresh_patterns(prefix)
        for _ in range(20):
            values = placeholders.fresh_values(prefix)
            assert values.keys() == patterns.keys()
            assert all(re.fullmatch(patterns[name], value) for name, value in values.items())
