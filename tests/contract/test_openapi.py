"""contract/*.openapi.yaml: valid OpenAPI 3.1, consistent with the profile, and faithful to the spec's cross-cutting rules."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "contract"
DOCS = {"payouts": CONTRACT / "payouts.openapi.yaml", "checkout": CONTRACT / "checkout.openapi.yaml"}
PROFILE_PATH = CONTRACT / "profile.default.yaml"
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

# Prefixes the spec names for its routes (Endpoints; Hosted payout link; Key rotation).
SPEC_PREFIXES = (
    "/payments/organizations/{orgId}/",
    "/recipients/{orgId}",
    "/payout-links/{token}/",
    "/checkout/organizations/{orgId}/",
    "/organizations/{orgId}/webhook-endpoints",
    "/organizations/{orgId}/api-keys/",
)
DEFAULT_BASE_URL = "http://127.0.0.1:8123/business/api/v1"
IDEMPOTENCY_KEY_PATTERN = r"^[A-Za-z0-9_.:-]{1,255}$"
REQUIRED_SCHEMAS = {
    "Error", "Recipient", "PaymentMethod", "Product", "Link", "Payment", "WebhookPayout", "Approval", "Batch",
    "BalanceHistoryEntry", "BalanceTransaction", "AuditEvent", "EventEnvelope", "WebhookEndpoint", "Delivery",
    "RegEDisclosure", "FundingAccount", "PaymentReason",
}


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def docs() -> dict[str, dict]:
    return {name: _load(path) for name, path in DOCS.items()}


@pytest.fixture(scope="module")
def profile_ops() -> dict:
    return _load(PROFILE_PATH)["operations"]


def operations(doc: dict):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


@pytest.fixture(scope="module")
def by_id(docs) -> dict[str, tuple[str, str, str, dict]]:
    out = {}
    for name, doc in docs.items():
        for path, method, op in operations(doc):
            assert op["operationId"] not in out, f"duplicate operationId {op['operationId']}"
            out[op["operationId"]] = (name, method.upper(), path, op)
    return out


def resolve(doc: dict, node: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"only local references are used: {ref}"
        target = doc
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def validator_for(doc: dict, schema_name: str) -> jsonschema.Draft202012Validator:
    uri = "urn:payconform:contract"
    registry = Registry().with_resource(uri, Resource.from_contents(doc, default_specification=DRAFT202012))
    return jsonschema.Draft202012Validator({"$ref": f"{uri}#/components/schemas/{schema_name}"}, registry=registry)


# --------------------------------------------------------------------------------------------- validity


@pytest.mark.parametrize("name", sorted(DOCS))
def test_document_is_valid_openapi_3_1(name, docs):
    from openapi_spec_validator import validate  # dev extra: pip install -e .[dev]

    assert docs[name]["openapi"].startswith("3.1")
    validate(docs[name])


@pytest.mark.parametrize("name", sorted(DOCS))
def test_document_is_self_contained(name):
    text = DOCS[name].read_text(encoding="utf-8")
    refs = re.findall(r"\$ref: '?([^'\s}]+)", text)
    assert refs and all(r.startswith("#/") for r in refs), "every $ref is local (each document is published alone)"


@pytest.mark.parametrize("name", sorted(DOCS))
def test_servers_base_url(name, docs):
    (server,) = docs[name]["servers"]
    assert server["url"] == "{base_url}"
    assert server["variables"]["base_url"]["default"] == DEFAULT_BASE_URL


@pytest.mark.parametrize("name", sorted(DOCS))
def test_security_schemes(name, docs):
    schemes = docs[name]["components"]["securitySchemes"]
    assert schemes["apiKey"] == {**schemes["apiKey"], "type": "apiKey", "in": "header", "name": "x-api-key"}
    signed = schemes["signedRequest"]
    assert (signed["type"], signed["in"], signed["name"]) == ("apiKey", "header", "X-Api-Key")
    for header in ("X-Svc-Signature", "X-Svc-Timestamp", "X-Svc-Nonce", "X-Svc-Request-Id"):
        assert header in signed["description"]


def test_schemathesis_loads_both_documents_and_their_links(docs):
    import schemathesis

    for name, path in DOCS.items():
        schema = schemathesis.openapi.from_path(str(path))
        loaded = {result.ok().definition.raw.get("operationId") for result in schema.get_all_operations()}
        declared = {op["operationId"] for item in docs[name]["paths"].values() for op in item.values()
                    if isinstance(op, dict) and "operationId" in op}
        assert loaded == declared, f"{name}: schemathesis loads {sorted(loaded ^ declared)} differently"
        rules = " ".join(dir(schema.as_state_machine()))  # raises on a link whose target or parameter is unknown
        links = [(status, link) for item in docs[name]["paths"].values() for op in item.values()
                 if isinstance(op, dict) for status, response in (op.get("responses") or {}).items()
                 for link in (response.get("links") or {})]
        assert links, f"{name}: no OpenAPI links"
        missing = [f"{status} {link}" for status, link in links if f"___{status}_{link}__" not in rules]
        assert not missing, f"{name}: links schemathesis did not turn into walk steps: {missing}"


# --------------------------------------------------------------------------------------------- profile


def test_profile_operations_appear_with_the_same_method_and_path(profile_ops, by_id):
    for op_id, entry in profile_ops.items():
        if entry["source"] == "profile":
            continue  # purely profile-defined; checked below, but a target may move them
        assert op_id in by_id, f"{op_id} is missing from the OpenAPI documents"
        _, method, path, _ = by_id[op_id]
        assert (method, path) == (entry["method"], entry["path"]), op_id


def test_documents_and_profile_name_the_same_operations(profile_ops, by_id):
    assert set(by_id) == set(profile_ops)
    for op_id, entry in profile_ops.items():
        _, method, path, op = by_id[op_id]
        assert (method, path) == (entry["method"], entry["path"]), op_id
        assert op.get("x-profile", False) == (entry["source"] == "profile"), f"{op_id}: x-profile"
        assert op.get("x-unnamed", False) == (entry.get("named_by") == "payconform"), f"{op_id}: x-unnamed"
        assert op["x-idempotency"] == entry["idempotency"], op_id
        assert op.get("x-money-write", False) == entry["money_write"], op_id


def test_idempotency_and_duplicate_headers_follow_the_profile(profile_ops, by_id, docs):
    for op_id, entry in profile_ops.items():
        name, _, _, op = by_id[op_id]
        params = [resolve(docs[name], p) for p in op.get("parameters", [])]
        idem = [p for p in params if p["in"] == "header" and p["name"].lower() == "idempotency-key"]
        dup = [p for p in params if p["in"] == "header" and p["name"].lower() == "x-allow-duplicate"]
        if entry["idempotency"] == "none":
            assert not idem, op_id
        else:
            (p,) = idem
            assert p["required"] == (entry["idempotency"] == "required"), op_id
            assert p["schema"]["pattern"] == IDEMPOTENCY_KEY_PATTERN, op_id
        if entry["money_write"]:
            (p,) = dup
            assert p["schema"]["enum"] == ["true"] and not p.get("required", False), op_id
        else:
            assert not dup, op_id


def test_profile_success_statuses_are_declared(profile_ops, by_id):
    for op_id, entry in profile_ops.items():
        _, _, _, op = by_id[op_id]
        for status in entry.get("success", []):
            assert str(status) in op["responses"], f"{op_id}: success {status} not declared"


def test_profile_example_bodies_fit_the_request_schemas(profile_ops, by_id, docs):
    for op_id, entry in profile_ops.items():
        name, _, _, op = by_id[op_id]
        if "body" not in entry:
            continue
        assert "requestBody" in op, f"{op_id}: the profile has a body, the document none"
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        uri = "urn:payconform:contract"
        registry = Registry().with_resource(uri, Resource.from_contents(docs[name], default_specification=DRAFT202012))
        # Resolve local references against the whole document.
        rooted = yaml.safe_load(yaml.safe_dump(schema).replace("'#/components/", f"'{uri}#/components/"))
        errors = list(jsonschema.Draft202012Validator(rooted, registry=registry).iter_errors(entry["body"]))
        assert not errors, f"{op_id}: {[e.message for e in errors]}"


# --------------------------------------------------------------------------------------------- cross-cutting rules


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_response_declares_x_request_id(name, docs):
    doc = docs[name]
    for path, method, op in operations(doc):
        for status, response in op["responses"].items():
            headers = resolve(doc, response).get("headers", {})
            assert "x-request-id" in headers, f"{method.upper()} {path} {status}"


@pytest.mark.parametrize("name", sorted(DOCS))
def test_error_responses_use_the_shared_error_schema(name, docs):
    doc = docs[name]
    for path, method, op in operations(doc):
        for status, response in op["responses"].items():
            if int(status) < 400:
                continue
            schema = resolve(doc, response)["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/Error"}, f"{method.upper()} {path} {status}"


@pytest.mark.parametrize("name", sorted(DOCS))
def test_authenticated_operations_declare_401_403_429(name, docs):
    for path, method, op in operations(docs[name]):
        statuses = set(op["responses"])
        assert "429" in statuses, f"{method.upper()} {path}"
        if op.get("security") != []:
            assert {"401", "403"} <= statuses, f"{method.upper()} {path}"


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_path_starts_with_a_prefix_the_spec_names(name, docs):
    for path in docs[name]["paths"]:
        assert path.startswith(SPEC_PREFIXES), path


def test_submit_payout_link_takes_no_credential(by_id):
    _, _, _, op = by_id["submitPayoutLink"]
    assert op["security"] == []
    others = [op_id for op_id, (_, _, _, o) in by_id.items() if o.get("security") == [] and op_id != "submitPayoutLink"]
    assert not others


def test_versioning_rule_5_statuses(by_id):
    expect = {
        "getBalanceHistory": {"400", "413"},
        "createBeneficiary": {"400", "401", "403", "422", "503"},
        "createPayout": {"202", "404", "422", "500"},
        "pricePayout": {"400", "404", "422"},
        "sendPayout": {"500"},
        "confirmPayoutFunding": {"400", "404", "409", "500"},
        "createPayoutBatch": {"202", "400", "409", "500"},
        "submitPayoutLink": {"400", "403", "404", "429", "503"},
        "createPayoutLink": {"400", "401", "403", "503"},
        "listPayouts": {"503"},
        "getFundingAccounts": {"503"},
        "listCorridors": {"400"},
        "listPaymentReasons": {"400"},
        "deleteBeneficiary": {"200", "400", "404"},
        "listOrders": {"503"},
        "publishCheckoutLink": {"200", "400", "409", "500", "503"},
        "refundCheckoutPayment": {"400", "403", "409", "502"},
        "cancelPayoutBatch": {"200", "404", "409"},
        "confirmPayoutBatch": {"200", "202", "409"},
    }
    for op_id, statuses in expect.items():
        assert statuses <= set(by_id[op_id][3]["responses"]), op_id


# --------------------------------------------------------------------------------------------- schemas


def test_the_named_resource_schemas_exist(docs):
    names = set(docs["payouts"]["components"]["schemas"]) | set(docs["checkout"]["components"]["schemas"])
    assert REQUIRED_SCHEMAS <= names, sorted(REQUIRED_SCHEMAS - names)
    reasons = docs["payouts"]["components"]["schemas"]["PaymentReason"]["enum"]
    assert len(reasons) == len(set(reasons)) == 18
    events = docs["payouts"]["components"]["schemas"]["EventType"]["enum"]
    assert len(events) == len(set(events)) == 22


def _walk(node, where=""):
    if isinstance(node, dict):
        yield where, node
        for k, v in node.items():
            yield from _walk(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{where}/{i}")


@pytest.mark.parametrize("name", sorted(DOCS))
def test_schemas_are_open_to_additive_fields(name, docs):
    for where, node in _walk(docs[name]):
        assert node.get("additionalProperties", True) is not False, where
        assert node.get("unevaluatedProperties", True) is not False, where


def test_error_schema_rejects_retryable(docs):
    v = validator_for(docs["payouts"], "Error")
    ok = {"type": "VALIDATION_ERROR", "status": 400, "detail": "cursor is foreign", "requestId": "req_1",
          "errors": [{"field": "cursor", "reason": "not issued for this organization"}], "somethingNew": 1}
    assert not list(v.iter_errors(ok))
    assert list(v.iter_errors({**ok, "retryable": False})), "the spec: there is no `retryable` field"
    assert list(v.iter_errors({**ok, "retryable": True}))
    for field in ("type", "status", "detail", "requestId"):
        assert list(v.iter_errors({k: x for k, x in ok.items() if k != field})), field
    assert list(v.iter_errors({**ok, "detail": ["not", "a", "string"]}))
    assert list(v.iter_errors({**ok, "status": "400"}))


def test_money_fields_are_decimal_strings(docs):
    v = validator_for(docs["payouts"], "WebhookPayout")
    payout = {"payoutId": "po_1", "status": "completed", "sourceAmount": "10.00", "sourceCurrency": "USD",
              "destinationAmount": "9.5", "fee": {"currency": "USD", "amount": "0.50"}, "rate": "0.95",
              "completedAt": None, "newField": {"x": 1}}
    assert not list(v.iter_errors(payout))
    for bad in (10.0, "10,00", "1e3", "", "ten"):
        assert list(v.iter_errors({**payout, "sourceAmount": bad})), bad
    assert list(v.iter_errors({**payout, "status": "paid"}))
    assert not list(validator_for(docs["payouts"], "BalanceTransaction").iter_errors({"id": "17", "net": "-12.34"}))


def test_audit_event_has_exactly_one_actor(docs):
    v = validator_for(docs["payouts"], "AuditEvent")
    row = {"id": "9", "action": "payout.create", "requestId": "r"}
    assert not list(v.iter_errors({**row, "apiKeyPrefix": "svc_test_abc"}))
    assert not list(v.iter_errors({**row, "actorUserId": "u1", "apiKeyPrefix": None}))
    assert list(v.iter_errors({**row, "apiKeyPrefix": "svc_test_abc", "actorUserId": "u1"}))
    assert list(v.iter_errors(row))


def test_checkout_link_refuses_product_id_with_items(docs, by_id):
    name, _, _, op = by_id["createCheckoutLink"]
    assert op["requestBody"]["content"]["application/json"]["schema"]["not"] == {"required": ["productId", "items"]}


# --------------------------------------------------------------------------------------------- the two copies

SHARED_KINDS = ("schemas", "headers", "parameters", "responses", "securitySchemes")


def test_shared_components_are_identical_in_both_documents(docs):
    payouts, checkout = docs["payouts"], docs["checkout"]
    assert payouts["x-shared-components"] == checkout["x-shared-components"]
    shared = payouts["x-shared-components"]
    assert "Error" in shared["schemas"]
    for kind in SHARED_KINDS:
        for name in shared[kind]:
            assert payouts["components"][kind][name] == checkout["components"][kind][name], f"{kind}/{name}"


def _block(text: str, *keys: str) -> str:
    """The raw text of the YAML block at keys (block style, two-space indent)."""
    lines = text.splitlines()
    start, indent = 0, -2
    for key in keys:
        indent += 2
        prefix = " " * indent + f"{key}:"
        start = next(i for i in range(start, len(lines)) if lines[i].startswith(prefix))
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    return "\n".join(lines[start:end])


def test_error_schema_is_byte_identical_in_both_documents():
    a = _block(DOCS["payouts"].read_text(encoding="utf-8"), "components", "schemas", "Error")
    b = _block(DOCS["checkout"].read_text(encoding="utf-8"), "components", "schemas", "Error")
    assert "not:" in a and "retryable" in a
    assert a == b


def test_webhooks_describe_the_22_event_types(docs):
    """One webhook per event type of contract/catalog/events.yaml, its body an envelope of that type."""
    catalog = _load(CONTRACT / "catalog" / "events.yaml")["types"]
    webhooks = docs["payouts"]["webhooks"]
    assert list(webhooks) == [t["type"] for t in catalog] == docs["payouts"]["components"]["schemas"]["EventType"]["enum"]
    for entry in catalog:
        post = webhooks[entry["type"]]["post"]
        envelope, own = post["requestBody"]["content"]["application/json"]["schema"]["allOf"]
        assert envelope == {"$ref": "#/components/schemas/EventEnvelope"}
        assert own["properties"]["type"] == {"const": entry["type"]}
        assert post["x-requirement"] == entry["req"] and post.get("x-opt-in", False) == entry["opt_in"]


@pytest.mark.parametrize("chain", [
    ["createBeneficiary", "addBeneficiaryMethod", "getBeneficiary", "deleteBeneficiary"],
    ["createCheckoutProduct", "createCheckoutLink", "publishCheckoutLink", "simulateCheckoutPayment",
     "refundCheckoutPayment"],
    ["createPayout", "getOrder", "cancelPayout"],
])
def test_links_chain_the_walks_the_fuzz_phase_takes(chain, by_id):
    """Each step of a walk is reachable from the one before through an OpenAPI link of a success response."""
    for source, target in zip(chain, chain[1:]):
        responses = by_id[source][3]["responses"]
        targets = {link.get("operationId") for code, r in responses.items() if str(code).startswith("2")
                   for link in (r.get("links") or {}).values()}
        assert target in targets, f"{source} has no link to {target}"
