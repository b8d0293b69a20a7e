"""The reference's second configuration (`--choices other`): the same spec, other choices where it does not show.

Under `other` each not-shown operation answers at its own path and the default's path is an unknown route;
lists use the other envelope; payout scenarios follow the amount's last four minor digits; the approval
threshold is 25000.00 and the policy says so; corridor rows name `destinationCurrency`; the payout lifecycle
dwells 2 s and 5 s; and `/openapi.json` describes exactly the routes served. Under `default` nothing changes
(the rest of tests/reference) and the document describes the default's routes.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import httpx
import pytest
from openapi_spec_validator import validate
from starlette.testclient import TestClient

from payconform.reference.__main__ import _parser
from payconform.reference.app import build_app
from payconform.reference.choices import DEFAULT, NOT_SHOWN, OTHER, Choices
from payconform.reference.reference import API_PREFIX, Config, Reference, place_operations
from payconform.reference.routes import all_operations

from .helpers import API, OPERATOR_TOKEN, PRODUCT, Org, assert_error, new_org, operator, unique

PAY = "/payments/organizations/{orgId}"
SPEC_PREFIX = re.compile(r"^/(?:payments/organizations|checkout/organizations|recipients)/\{orgId\}/")
DEFAULT_ROUTES = place_operations(all_operations(), DEFAULT)


def _client(choices: Choices) -> Iterator[TestClient]:
    ref = Reference(Config(operator_token=OPERATOR_TOKEN, choices=choices))
    with TestClient(build_app(ref), raise_server_exceptions=False, client=("127.0.0.1", 50001)) as c:
        yield c
    ref.close()


@pytest.fixture
def other() -> Iterator[Org]:
    yield from (new_org(c) for c in _client(OTHER))


@pytest.fixture
def default_client() -> Iterator[TestClient]:
    yield from _client(DEFAULT)


def _filled(path: str) -> str:
    """A path with every placeholder but `{orgId}` filled with a made-up id."""
    return re.sub(r"{(?!orgId})\w+}", "x_unknown", path)


def _recipient(org: Org, account: str) -> str:
    """A USD recipient made through the other create route and body field; its destinationAccountId."""
    body = {"name": unique("n"), "email": "ada@example.com", "country": "US", "type": "individual",
            "payoutMethod": {"kind": "fiat", "currency": "USD",
                             "recipientDetails": {"accountNumber": account, "routingNumber": "021000021"}}}
    r = org.call("POST", "/recipients/{orgId}/new", json=body)
    assert r.status_code == 201, r.text
    return r.json()["paymentMethods"][0]["destinationAccountId"]


def _payout(org: Org, account_id: str, amount: str) -> dict:
    body = {"destinationAccountId": account_id, "sourceAmount": amount, "sourceCurrency": "USD",
            "destinationCurrency": "USD", "reference": unique("ref")}
    r = org.call("POST", f"{PAY}/payouts", json=body, idem=unique("po"))
    assert r.status_code == 201, r.text
    return r.json()


def _advance(org: Org, seconds: int) -> None:
    assert operator(org.client, "POST", f"/orgs/{org.id}/clock", {"advance_seconds": seconds}).status_code == 200


def test_every_path_not_shown_is_chosen_otherwise() -> None:
    moved = {op_id for op_id, parts in NOT_SHOWN.items() if "path" in parts}
    assert set(OTHER.routes) == moved
    for op_id, route in OTHER.routes.items():
        default = DEFAULT_ROUTES[op_id]
        assert (route.method, route.path) != (default.method, default.path), op_id
        prefix = SPEC_PREFIX.match(default.path + "/")
        assert prefix and route.path.startswith(prefix.group()), op_id  # under the spec's prefix, as the default's


@pytest.mark.parametrize("op_id", sorted(OTHER.routes))
def test_operation_answers_at_its_other_path_only(other: Org, op_id: str) -> None:
    route, default = OTHER.routes[op_id], DEFAULT_ROUTES[op_id]
    write = route.method != "GET"
    here = other.call(route.method, _filled(route.path), json={} if write else None,
                      idem=unique("k") if write else None)
    assert here.json().get("type") != "ROUTE_NOT_FOUND", here.text
    there = other.call(default.method, _filled(default.path), json={} if write else None,
                       idem=unique("k") if write else None)
    assert_error(there, 404, "ROUTE_NOT_FOUND")


def test_lists_use_the_other_envelope(other: Org) -> None:
    for name in ("a", "b"):
        r = other.call("POST", "/checkout/organizations/{orgId}/products", idem=unique("p"),
                       json={"name": unique(name), "currency": "USD", "unitAmount": "5.00"})
        assert r.status_code == 201, r.text
    first = other.call("GET", "/checkout/organizations/{orgId}/product-catalog?limit=1").json()
    assert set(first) == {"items", "nextCursor"} and len(first["items"]) == 1  # the cursor is the spec's
    rest = other.call("GET", f"/checkout/organizations/{{orgId}}/product-catalog?limit=1&cursor={first['nextCursor']}")
    assert set(rest.json()) == {"items"} and rest.json()["items"] != first["items"]
    reasons = other.call("GET", f"{PAY}/payment-reasons").json()
    assert set(reasons) == {"items"} and "purchase_of_services" in reasons["items"]
    assert set(other.call("GET", f"{PAY}/balance_transactions").json()) == {"items", "hasMore"}


def test_corridor_rows_name_their_destination_currency(other: Org) -> None:
    rows = other.call("GET", f"{PAY}/routing/corridors").json()["items"]
    assert {row["destinationCurrency"] for row in rows} >= {"USD", "EUR", "USDC", "USDT"}
    assert all("currency" not in row for row in rows)


def test_the_policy_shows_the_other_threshold(other: Org) -> None:
    assert other.call("GET", f"{PAY}/policy").json()["approvals"]["threshold"] == "25000.00"
    top_up = other.call("POST", f"{PAY}/sandbox/top-ups", json={"amount": "30000.00", "currency": "USD"},
                        idem=unique("f"))
    assert top_up.status_code == 200, top_up.text
    account = _recipient(other, "55501230000")
    assert _payout(other, account, "24999.99")["status"] == "pending"
    held = other.call("POST", f"{PAY}/payouts", idem=unique("po"), json={
        "destinationAccountId": account, "sourceAmount": "25000.00", "sourceCurrency": "USD",
        "destinationCurrency": "USD", "reference": unique("ref")})
    assert held.status_code == 202 and held.json()["status"] == "pending_approval"


def test_scenarios_follow_the_amount_not_the_account(other: Org) -> None:
    assert other.call("POST", f"{PAY}/sandbox/top-ups", json={"amount": "1000.00", "currency": "USD"},
                      idem=unique("f")).status_code == 200
    by_amount = _payout(other, _recipient(other, "55502220000"), "100.03")
    by_account = _payout(other, _recipient(other, "55502220003"), "100.00")
    _advance(other, 2)
    read = other.call("GET", f"{PAY}/orders/{by_account['payoutId']}").json()
    assert read["status"] == "processing"  # processing from 2 s ...
    _advance(other, 3)
    failed = other.call("GET", f"{PAY}/orders/{by_amount['payoutId']}").json()
    assert (failed["status"], failed["failureCode"]) == ("failed", "account_invalid")
    assert other.call("GET", f"{PAY}/orders/{by_account['payoutId']}").json()["status"] == "completed"  # ... to 5 s
    refused = other.call("POST", f"{PAY}/payouts", idem=unique("po"), json={
        "destinationAccountId": _recipient(other, "55502240000"), "sourceAmount": "100.06",
        "sourceCurrency": "USD", "destinationCurrency": "USD", "reference": unique("ref")})
    assert_error(refused, 422, "PAYOUT_REFUSED")


def test_recipient_create_takes_the_other_method_field(other: Org) -> None:
    """The default's `paymentMethod` is an unknown field there, ignored like any other: no method is made."""
    body = {"name": "Ada", "email": "ada@example.com", "country": "US", "type": "individual",
            "paymentMethod": {"kind": "fiat", "currency": "USD",
                              "recipientDetails": {"accountNumber": "55503330000", "routingNumber": "021000021"}}}
    created = other.call("POST", "/recipients/{orgId}/new", json=body)
    assert created.status_code == 201 and created.json()["paymentMethods"] == []
    assert _recipient(other, "55503330000")  # the same account under `payoutMethod` makes the method


@pytest.mark.parametrize("choices", [DEFAULT, OTHER], ids=lambda c: c.name)
def test_the_served_document_describes_the_routes_served(choices: Choices) -> None:
    for client in _client(choices):
        answer = client.get("/openapi.json")
        assert answer.status_code == 200
        doc = answer.json()
        validate(doc)
        assert doc["servers"] == [{"url": API_PREFIX}]
        placed = place_operations(all_operations(), choices)
        described = {o["operationId"]: (method.upper(), path)
                     for path, methods in doc["paths"].items() for method, o in methods.items()}
        assert described == {op_id: (placed[op_id].method, placed[op_id].path) for op_id in NOT_SHOWN}
        for op_id in ("listBeneficiaries", "listCorridors"):
            method, path = described[op_id]
            operation = doc["paths"][path][method.lower()]
            envelope = choices.envelope(op_id)
            schema = operation["responses"]["2XX"]["content"]["application/json"]["schema"]
            assert schema["properties"][envelope.items]["type"] == "array"
            assert operation["x-pagination"]["cursor"] == envelope.cursor
        create = doc["paths"][described["createBeneficiary"][1]]["post"]
        fields = create["requestBody"]["content"]["application/json"]["schema"]["properties"]
        assert choices.recipient_method_field in fields


@pytest.mark.parametrize("choices", [DEFAULT, OTHER], ids=lambda c: c.name)
def test_an_edit_during_an_in_flight_publish_conflicts(choices: Choices) -> None:
    """An edit of a link while a publish of it is held by an operator delay answers 409 CONFLICT wherever the
    deployment serves the edit (PATCH .../links/{linkId} or POST .../payment-links/{linkId})."""
    ref = Reference(Config(operator_token=OPERATOR_TOKEN, choices=choices))
    app = build_app(ref)
    with TestClient(app, raise_server_exceptions=False, client=("127.0.0.1", 50001)) as client:
        org = new_org(client)
        product = org.call("POST", "/checkout/organizations/{orgId}/products", json=PRODUCT, idem=unique("p"))
        create = ref.operations["createCheckoutLink"]
        link = org.call(create.method, create.path, json={"productId": product.json()["id"]}, idem=unique("l"))
        assert link.status_code == 201, link.text
        assert operator(client, "POST", "/faults", {"org_id": org.id, "operation": "publishCheckoutLink",
                                                    "kind": "delay", "seconds": 0.3, "count": 1}).status_code == 201
        publish, edit = (ref.operations[op_id] for op_id in ("publishCheckoutLink", "updateCheckoutLink"))
        params = {"orgId": org.id, "linkId": link.json()["id"]}

        async def both() -> list[httpx.Response]:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://ref") as c:
                def send(op, idem: str, body: dict | None = None):
                    return c.request(op.method, API + op.path.format(**params), json=body,
                                     headers={"x-api-key": org.key, "Idempotency-Key": idem})
                first = asyncio.create_task(send(publish, unique("pub")))
                await asyncio.sleep(0.1)
                second = await send(edit, unique("edit"), {"expiresAt": None})
                return [await first, second]

        published, edited = asyncio.run(both())
    ref.close()
    assert published.status_code == 200, published.text
    assert_error(edited, 409, "CONFLICT")


def test_default_serves_the_default_paths(default_client: TestClient) -> None:
    org = new_org(default_client)
    assert set(org.call("GET", f"{PAY}/corridors").json()) == {"data"}
    assert_error(org.call("GET", f"{PAY}/routing/corridors"), 404, "ROUTE_NOT_FOUND")
    assert org.call("GET", f"{PAY}/policy").json()["approvals"]["threshold"] == "5000.00"


def test_the_command_line_selects_the_configuration() -> None:
    assert _parser().parse_args([]).choices == "default"
    assert _parser().parse_args(["--choices", "other"]).choices == "other"
    with pytest.raises(SystemExit):
        _parser().parse_args(["--choices", "mine"])
