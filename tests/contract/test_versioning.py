"""The contract documents carry what the spec's Versioning part says: one document per contract, the operation
names of Endpoints, and the added operations, fields and enum values of rules 6-8 (marked `x-versioning-added`).

The rule texts are read from contract/requirements.yaml (their quotes are checked against the spec by
test_requirements.py), so a changed rule shows up here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "contract"
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
SPEC_SCHEMA_NAMES = {"Beneficiary": "Recipient"}  # the spec's name -> the contract's component

# Rule 8 names the added operations in prose; the operation ids each phrase stands for.
ADDED_OPERATIONS = {
    "listing webhook endpoints and deliveries": ["listWebhookEndpoints", "listWebhookEndpointDeliveries"],
    "payment reasons": ["listPaymentReasons"],
    "policy": ["getPolicy"],
    "recipient read, update, delete, external-id read and method deletion and details": [
        "getBeneficiary", "updateBeneficiary", "deleteBeneficiary", "getBeneficiaryByExternalId",
        "deleteBeneficiaryMethod", "getBeneficiaryMethodDetails"],
    "batches (create, list, read, items, confirm, cancel)": [
        "createPayoutBatch", "listPayoutBatches", "getPayoutBatch", "listPayoutBatchItems", "confirmPayoutBatch",
        "cancelPayoutBatch"],
    "approvals (list, read)": ["listPayoutApprovals", "getPayoutApproval"],
    "balance transactions": ["listBalanceTransactions"],
    "audit events": ["listAuditEvents"],
}
# Rule 7's enums other than the sandbox events: the component properties they are.
ADDED_ENUMS = {("BalanceHistoryEntry", "type"), ("BalanceHistoryEntry", "status"), ("MethodDetails", "kind"),
               ("FundingAccount", "settlesTo")}


def _load(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return {name: _load(CONTRACT / f"{name}.openapi.yaml") for name in ("payouts", "checkout")}


@pytest.fixture(scope="module")
def quotes() -> dict[str, str]:
    return {r["id"]: r["quote"] for r in _load(CONTRACT / "requirements.yaml")["requirements"]
            if r["id"].startswith("VER-")}


def operations(doc: dict):
    for item in doc["paths"].values():
        for method, op in item.items():
            if method in METHODS:
                yield op


def marked_properties(doc: dict, kind: str) -> set[tuple[str, str]]:
    return {(name, prop) for name, schema in doc["components"]["schemas"].items()
            for prop, sub in (schema.get("properties") or {}).items()
            if isinstance(sub, dict) and sub.get("x-versioning-added") == kind}


def test_each_contract_is_its_own_versioned_document(docs):
    """Rule 1: the payouts contract is the version a client pins; the checkout contract is published apart."""
    assert docs["payouts"]["info"]["version"] and docs["checkout"]["info"]["version"]
    payouts_ops = {op["operationId"] for op in operations(docs["payouts"])}
    checkout_ops = {op["operationId"] for op in operations(docs["checkout"])}
    assert not payouts_ops & checkout_ops
    assert all(path.startswith("/checkout/") for path in docs["checkout"]["paths"])
    assert not any(path.startswith("/checkout/") for path in docs["payouts"]["paths"])


def test_operations_are_identified_by_the_spec_names(docs):
    """Rule 1: every operation name Endpoints gives is an operationId of the contract."""
    spec = (CONTRACT / "spec" / "service-interface.md").read_text(encoding="utf-8")
    endpoints = spec[spec.index("\n## Endpoints"):spec.index("\n## Authentication")]
    names = set(re.findall(r"\(`([a-z]+[A-Z][A-Za-z]*)`", endpoints))
    for listed in re.findall(r"operation names ([^)]*)\)", endpoints):
        names.update(re.findall(r"`([a-z][A-Za-z]+)`", listed))
    ids = {op["operationId"] for doc in docs.values() for op in operations(doc)}
    assert len(names) > 40 and not names - ids, sorted(names - ids)


def test_rule_8_added_operations_are_in_the_contract_and_marked(docs, quotes):
    for phrase in ADDED_OPERATIONS:
        assert phrase in quotes["VER-ADDED-OPERATIONS"], phrase
    marked = {op["operationId"] for doc in docs.values() for op in operations(doc)
              if op.get("x-versioning-added") == "operation"}
    assert marked == {op for ops in ADDED_OPERATIONS.values() for op in ops}


def test_rule_6_added_fields_are_in_the_contract_and_marked(docs, quotes):
    named: set[tuple[str, str]] = set()
    schema = ""
    for token in re.findall(r"`([A-Za-z]*)\.([A-Za-z]+)`", quotes["VER-CHANGELOG-FIELDS"]):
        schema = SPEC_SCHEMA_NAMES.get(token[0], token[0]) if token[0] else schema
        named.add((schema, token[1]))
    assert len(named) == 14
    assert marked_properties(docs["payouts"], "field") == named
    assert {p for p in marked_properties(docs["checkout"], "field")} == {p for p in named if p[0] == "Error"}


def test_rule_7_added_enum_values_are_in_the_contract(docs, quotes):
    assert marked_properties(docs["payouts"], "enum-values") == ADDED_ENUMS
    schemas = docs["payouts"]["components"]["schemas"]
    assert all(schemas[name]["properties"][prop].get("enum") for name, prop in ADDED_ENUMS)
    suffixes = re.findall(r"`(?:payout_approval)?\.([a-z_]+)`", quotes["VER-SANDBOX-EVENTS-ENUM"])
    added = {f"payout_approval.{s}" for s in suffixes} | {"checkout_payment.partially_refunded"}
    assert len(added) == 7 and added <= set(schemas["EventType"]["enum"])
