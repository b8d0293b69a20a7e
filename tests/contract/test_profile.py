"""contract/profile.default.yaml: shape, provenance, and the spec's idempotency rule (Endpoints, common rule 3)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROFILE_PATH = ROOT / "contract" / "profile.default.yaml"

METHODS = {"GET", "POST", "PATCH", "PUT", "DELETE"}
IDEMPOTENCY = {"required", "optional", "none"}

# Operation names the spec gives (Endpoints and Versioning rule 1). Those whose path the spec does not show are
# marked; they must be `source: profile`. Every other name must be `source: spec`.
SPEC_NAMED = {
    "getBalance", "getBalanceHistory", "listBalanceTransactions", "listAuditEvents", "confirmPayoutFunding",
    "cancelPayoutBatch", "createPayoutBatch", "listPayoutBatches", "getPayoutBatch", "listPayoutBatchItems",
    "confirmPayoutBatch", "listPayoutApprovals", "getPayoutApproval", "listPaymentReasons", "getPolicy",
    "createPayout", "cancelPayout", "createSandboxWebhookEndpoint", "listSandboxWebhookDeliveries",
    "addBeneficiaryMethod", "updateBeneficiary", "deleteBeneficiary", "deleteBeneficiaryMethod", "getBeneficiary",
    "getBeneficiaryByExternalId", "getBeneficiaryMethodDetails", "submitPayoutLink", "createCheckoutProduct",
    "updateCheckoutProduct", "deleteCheckoutProduct", "publishCheckoutLink", "pauseCheckoutLink", "deleteCheckoutLink",
    "listCheckoutPayments", "simulateCheckoutPayment", "simulateCheckoutPaymentOutcome",
}
SPEC_NAMED_PATH_NOT_SHOWN = {
    "createBeneficiary", "listBeneficiaries", "pricePayout", "sendPayout", "getIndicativeQuote", "listCorridors",
    "getFundingAccounts", "getPayoutFunding", "fundSandbox", "listPayouts", "getPayout", "createPayoutLink",
}
# Not-shown checkout operations the spec describes without a name ("Checkout link create, list, read and update";
# product read and list are implied by the product routes).
PAYCONFORM_NAMED_NOT_SHOWN = {"createCheckoutLink", "getCheckoutLink", "listCheckoutLinks", "updateCheckoutLink",
                              "getCheckoutProduct", "listCheckoutProducts"}

# docs/architecture.md, "Profile (operations the spec does not show)": the reference implements exactly these.
ARCHITECTURE_PATHS = {
    "createBeneficiary": ("POST", "/recipients/{orgId}"),
    "listBeneficiaries": ("GET", "/recipients/{orgId}"),
    "getCheckoutProduct": ("GET", "/checkout/organizations/{orgId}/products/{productId}"),
    "listCheckoutProducts": ("GET", "/checkout/organizations/{orgId}/products"),
    "createCheckoutLink": ("POST", "/checkout/organizations/{orgId}/links"),
    "getCheckoutLink": ("GET", "/checkout/organizations/{orgId}/links/{linkId}"),
    "fundSandbox": ("POST", "/payments/organizations/{orgId}/sandbox/funding"),
    "createPayout": ("POST", "/payments/organizations/{orgId}/payouts"),
    "getPayout": ("GET", "/payments/organizations/{orgId}/payouts/{payoutId}"),
    "listPayouts": ("GET", "/payments/organizations/{orgId}/payouts"),
}

# Rule 3: "Required on money-moving routes and on every checkout write and on add-payment-method; optional on
# recipient PATCH and DELETE". The spec does not list the money-moving routes; this is payconform's reading,
# kept here apart from the profile so that a change to either is a visible decision.
MONEY_MOVING = {"confirmPayoutFunding", "cancelPayoutBatch", "createPayoutBatch", "confirmPayoutBatch", "createPayout",
                "cancelPayout", "submitPayoutLink"}
# Rows of Endpoints that say "Header `Idempotency-Key` required" in so many words.
ROW_SAYS_REQUIRED = {"confirmPayoutFunding", "cancelPayoutBatch", "addBeneficiaryMethod", "simulateCheckoutPayment"}


def rule3(op_id: str, entry: dict) -> str:
    method, path = entry["method"], entry["path"]
    if method == "GET":
        return "none"
    if path.startswith("/checkout/"):
        return "required"
    if op_id == "addBeneficiaryMethod" or op_id in MONEY_MOVING:
        return "required"
    if path.startswith("/recipients/") and method in {"PATCH", "DELETE"}:
        return "optional"
    return "none"


@pytest.fixture(scope="module")
def profile() -> dict:
    return yaml.safe_load(PROFILE_PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ops(profile) -> dict:
    return profile["operations"]


def test_version_and_sections(profile):
    assert profile["version"] == 1
    assert set(profile) >= {"operations", "corridors", "sandbox"}


def test_every_operation_has_method_path_idempotency_source(ops):
    for op_id, e in ops.items():
        assert e["method"] in METHODS, op_id
        assert isinstance(e["path"], str) and e["path"].startswith("/"), op_id
        assert e["idempotency"] in IDEMPOTENCY, op_id
        assert isinstance(e["money_write"], bool), op_id
        assert e["source"] in {"spec", "profile"}, op_id
        assert re.fullmatch(r"[a-z][A-Za-z]+", op_id), op_id
        assert str(e.get("spec", "")).startswith(("Endpoints", "Events")), f"{op_id}: `spec` names the section"


def test_profile_choices_say_why(ops):
    for op_id, e in ops.items():
        if e["source"] == "profile" or e.get("body_source") == "profile" or (e.get("page") or {}).get("source") == "profile":
            why = e.get("why")
            assert isinstance(why, str) and why.strip(), f"{op_id}: profile-chosen part without a `why`"
            assert "\n" not in why.strip(), f"{op_id}: `why` should be one line"
        assert e.get("body_source", "profile") == "profile", op_id


def test_names_are_the_spec_names(ops):
    missing = (SPEC_NAMED | SPEC_NAMED_PATH_NOT_SHOWN | PAYCONFORM_NAMED_NOT_SHOWN) - set(ops)
    assert not missing, f"operations missing from the profile: {sorted(missing)}"
    for op_id in SPEC_NAMED:
        assert ops[op_id]["source"] == "spec", op_id
        assert "named_by" not in ops[op_id], f"{op_id} is named by the spec"
    for op_id in SPEC_NAMED_PATH_NOT_SHOWN - {"createPayout"}:
        assert ops[op_id]["source"] == "profile", op_id
    for op_id in PAYCONFORM_NAMED_NOT_SHOWN:
        assert ops[op_id]["source"] == "profile", op_id
    # createPayout: the path is shown, the body is not.
    assert ops["createPayout"]["source"] == "spec" and ops["createPayout"]["body_source"] == "profile"
    # Every other operation is a spec route without a name.
    for op_id in set(ops) - SPEC_NAMED - SPEC_NAMED_PATH_NOT_SHOWN - PAYCONFORM_NAMED_NOT_SHOWN:
        assert ops[op_id]["source"] == "spec", op_id
        assert ops[op_id].get("named_by") == "payconform", f"{op_id}: unnamed spec route needs named_by: payconform"


def test_not_shown_paths_follow_the_architecture(ops):
    for op_id, (method, path) in ARCHITECTURE_PATHS.items():
        assert (ops[op_id]["method"], ops[op_id]["path"]) == (method, path), op_id
    assert ops["fundSandbox"]["idempotency"] == "required"


def test_idempotency_follows_rule_3_on_spec_routes(ops):
    wrong = {op_id: (e["idempotency"], rule3(op_id, e)) for op_id, e in ops.items()
             if e["source"] == "spec" and e["idempotency"] != rule3(op_id, e)}
    assert not wrong, f"(profile, rule 3) differ: {wrong}"
    for op_id in ROW_SAYS_REQUIRED:
        assert ops[op_id]["idempotency"] == "required", op_id
    # The brief's reading for createBeneficiary (a recipient write whose rule the spec does not state).
    assert ops["createBeneficiary"]["idempotency"] == "optional"


def test_money_writes(ops):
    assert ops["confirmPayoutFunding"]["money_write"], "the spec names X-Allow-Duplicate on confirmPayoutFunding"
    assert ops["createPayout"]["money_write"]
    for op_id, e in ops.items():
        if e["money_write"]:
            assert e["idempotency"] == "required", f"{op_id}: a money write needs a key (duplicate guard is per key)"
            assert e.get("moves_money"), op_id
        if e["method"] == "GET":
            assert not e["money_write"] and not e.get("moves_money"), op_id


def test_paths_are_well_formed(ops):
    seen = {}
    for op_id, e in ops.items():
        path = e["path"]
        assert "//" not in path and not path.endswith("/"), op_id
        for name in re.findall(r"{([^}]*)}", path):
            assert re.fullmatch(r"[a-z][A-Za-z]*", name), f"{op_id}: placeholder {name}"
        if e.get("auth") != "none":
            assert "{orgId}" in path, f"{op_id}: organization-scoped routes carry {{orgId}}"
        key = (e["method"], re.sub(r"{[^}]*}", "{}", path))
        assert key not in seen, f"{op_id} and {seen.get(key)} share {key}"
        seen[key] = op_id


def test_optional_fields_have_known_values(ops):
    for op_id, e in ops.items():
        assert e.get("auth", "api_key") in {"api_key", "none", "dashboard"}, op_id
        assert e.get("named_by", "payconform") == "payconform", op_id
        for s in e.get("success", []):
            assert isinstance(s, int) and 200 <= s < 300, op_id
        page = e.get("page")
        if page is not None:
            assert e["method"] == "GET", op_id
            assert set(page) >= {"items", "cursor", "cursor_param", "source"}, op_id


def test_submit_payout_link_is_the_only_route_without_a_credential(ops):
    assert {op_id for op_id, e in ops.items() if e.get("auth") == "none"} == {"submitPayoutLink"}


def test_corridors(profile):
    c = profile["corridors"]
    assert set(c) >= {"USD", "EUR", "USDC", "USDT"}
    assert c["USD"]["kind"] == "fiat" and re.fullmatch(r"[0-9]{4,17}", c["USD"]["example"]["accountNumber"])
    assert re.fullmatch(r"[0-9]{9}", c["USD"]["example"]["routingNumber"])
    assert c["EUR"]["kind"] == "fiat" and re.fullmatch(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}", c["EUR"]["example"]["iban"])
    for cur in ("USDC", "USDT"):
        assert c[cur]["kind"] == "crypto"
        assert re.fullmatch(r"0x[0-9a-fA-F]{40}", c[cur]["example"]["address"])
        assert c[cur]["example"]["chain"] in {"ethereum", "polygon", "base", "solana"}


def test_sandbox_values_the_spec_gives(profile):
    sb = profile["sandbox"]
    assert sb["funding_hash"]["outcomes"]["0001"] == "FUNDING_TRANSACTION_INVALID"
    assert sb["funding_hash"]["outcomes"]["0002"] == "FUNDING_NOT_YET_VERIFIABLE"
    assert set(sb["checkout_payment"]["outcomes"]) >= {"02", "04"}
    assert sb["checkout_payment"]["example_totals"]["settles_later"].endswith(".02")
    assert sb["checkout_payment"]["example_totals"]["charged_back"].endswith(".04")
    assert "0002" in sb["payout_scenarios"]["outcomes"]
    for name, part in sb.items():
        assert part.get("source") in {"spec", "profile"}, name
        if part["source"] == "profile":
            assert part.get("why"), name


def test_deployment_choices_are_described(profile):
    """The choices a deployment makes where the spec is silent, each with its `why`: what selects a payout
    scenario, where the policy answer shows the approval threshold, what names a corridor row's currency, how
    long `processing` lasts."""
    sb = profile["sandbox"]
    scenarios = sb["payout_scenarios"]
    assert scenarios["select_by"] in {"account_suffix", "amount_minor_suffix"}
    assert all(re.fullmatch(r"[0-9]{4}", code) for code in scenarios["outcomes"] if code != "other")
    timeline = scenarios["timeline"]
    assert 0 < float(timeline["processing_seconds"]) < float(timeline["settle_seconds"])
    assert re.fullmatch(r"[A-Za-z]+(\.[A-Za-z]+)*", sb["approval"]["policy_field"])
    assert re.fullmatch(r"[0-9]+\.[0-9]{2}", sb["approval"]["threshold"])
    key = sb["pricing"]["corridor_key"]
    assert re.fullmatch(r"[A-Za-z]+", key)
    assert all(key in row for row in profile["corridors"].values()), "the profile's corridors carry `corridor_key`"
    for part, name in ((scenarios, "select_by"), (timeline, "processing"), (sb["approval"], "policy_field"),
                       (sb["pricing"], "corridor_key")):
        why = part.get(f"{name}_why")
        assert isinstance(why, str) and why.strip() and "\n" not in why.strip(), f"{name}: a one-line `why`"
