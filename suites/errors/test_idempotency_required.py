"""Endpoints rule 3: which routes require an `Idempotency-Key`, and what a request without one gets.

"Required on money-moving routes and on every checkout write and on add-payment-method ... Missing:
`400 IDEMPOTENCY_KEY_REQUIRED`". The routes are taken from the profile's `idempotency: required` entries
that this module knows how to set up (a real resource for each, so that the only thing wrong with the
request is the missing header; a refusal runs nothing, so the product routes share one product). Recipient PATCH and DELETE are "optional ... (without it the request runs
once with no replay)": they must run without a key, and run again when repeated; with a key, "Same key and
same body replays the stored response". What a second DELETE of the same recipient answers is not shown
("Delete a recipient (`deleteBeneficiary`; 200, 404)", and a recipient has `deletedAt`, so a delete may be soft):
200 or 404.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status, run_contract

from .._support.checkout import create_link
from .._support.payouts import payable_destination, payout_body
from .._support.products import create_product, product_body
from .._support.profile import example_body
from .._support.recipients import add_method_body, create_recipient
from .._support.types import Scope, Unique, shared_scope

Setup = Callable[[Api, Contract, Unique], dict[str, Any]]
_PRODUCTS: dict[Scope, str] = {}  # per organization and mode: the product the refused keyless writes name


def _product(api: Api, contract: Contract, unique: Unique) -> str:
    """A product this module's refused writes share: a refusal runs nothing, so one serves every route."""
    shared = shared_scope(api)
    if shared not in _PRODUCTS:
        _PRODUCTS[shared] = create_product(api, contract, unique)["id"]
    return _PRODUCTS[shared]


# op id -> the path parameters and body of an otherwise valid request (creating what it needs)
SETUPS: dict[str, Setup] = {
    "createPayout": lambda api, c, u: {"json": payout_body(c, payable_destination(api, c, u), u("ref"))},
    "fundSandbox": lambda api, c, u: {"json": example_body(c, "fundSandbox")},
    "createCheckoutProduct": lambda api, c, u: {"json": product_body(c, u)},
    "updateCheckoutProduct": lambda api, c, u: {"productId": _product(api, c, u),
                                                "json": example_body(c, "updateCheckoutProduct")},
    "deleteCheckoutProduct": lambda api, c, u: {"productId": _product(api, c, u)},
    "createCheckoutLink": lambda api, c, u: {"json": example_body(c, "createCheckoutLink",
                                                                  productId=_product(api, c, u))},
    "deleteCheckoutLink": lambda api, c, u: {"linkId": create_link(api, c, _product(api, c, u))["id"]},
    "addBeneficiaryMethod": lambda api, c, u: {"recipientId": create_recipient(api, c, u)["id"],
                                               "json": add_method_body(c)},
}


def _required_routes() -> list[str]:
    operations = run_contract().profile.get("operations") or {}
    return [op for op in SETUPS if (operations.get(op) or {}).get("idempotency") == "required"]


@pytest.mark.smoke(ids=["fundSandbox"])
@pytest.mark.req("IDEM-REQUIRED", "IDEM-REQUIRED-ROUTES", "ERR-IDEMPOTENCY-KEY-REQUIRED")
@pytest.mark.parametrize("op_id", _required_routes())
def test_missing_key_is_refused(api: Api, contract: Contract, unique: Unique, op_id: str) -> None:
    """A keyed route answers 400 IDEMPOTENCY_KEY_REQUIRED to an otherwise valid request without the header."""
    request = SETUPS[op_id](api, contract, unique)
    expect_error(api.op(op_id, idempotency_key=None, **request), 400, "IDEMPOTENCY_KEY_REQUIRED",
                 f"{op_id} without an Idempotency-Key")


def _patch(api: Api, recipient_id: str, name: str) -> None:
    ex = api.op("updateBeneficiary", recipientId=recipient_id, json={"name": name}, idempotency_key=None)
    expect_status(ex, 200, "recipient PATCH without an Idempotency-Key runs")


@pytest.mark.req("IDEM-OPTIONAL-ROUTES")
def test_recipient_patch_without_key_runs_every_time(api: Api, contract: Contract, unique: Unique) -> None:
    """PATCH A, B, then A again without a key: each one runs (no replay), so the recipient ends up named A.

    A server that deduplicated keyless requests would replay the first answer to the third PATCH and leave B.
    """
    recipient_id = create_recipient(api, contract, unique)["id"]
    first, second = unique("a"), unique("b")
    for name in (first, second, first):
        _patch(api, recipient_id, name)
    ex = api.op("getBeneficiary", recipientId=recipient_id)
    expect_status(ex, 200)
    expect(ex.json.get("name") == first,
           f"after PATCH name={first!r}, {second!r}, {first!r} without a key the recipient is named "
           f"{ex.json.get('name')!r}: the third PATCH did not run", ex)


@pytest.mark.req("IDEM-OPTIONAL-ROUTES", "IDEM-REPLAY")
def test_recipient_patch_with_key_replays(api: Api, contract: Contract, unique: Unique) -> None:
    """PATCH name A under a key, B without one, then A under the first key again: the third answer is the
    stored one (same status, name A) and nothing ran, so the recipient stays named B."""
    recipient_id = create_recipient(api, contract, unique)["id"]
    first, second, key = unique("a"), unique("b"), unique("key")
    stored = expect_status(api.op("updateBeneficiary", recipientId=recipient_id, json={"name": first},
                                  idempotency_key=key), 200, "recipient PATCH under an Idempotency-Key")
    _patch(api, recipient_id, second)
    again = api.op("updateBeneficiary", recipientId=recipient_id, json={"name": first}, idempotency_key=key)
    expect(again.status == stored.status and isinstance(again.json, dict) and again.json.get("name") == first,
           f"the same PATCH under the same key answered {again.status} naming {_name(again)!r}, not the stored "
           f"{stored.status} naming {first!r}", again)
    ex = expect_status(api.op("getBeneficiary", recipientId=recipient_id), 200, "reading the recipient")
    expect(ex.json.get("name") == second, f"after PATCH {first!r} (key), {second!r} (no key), {first!r} (the same "
           f"key) the recipient is named {ex.json.get('name')!r}: the replayed PATCH ran again", ex)


def _name(ex: Any) -> Any:
    return ex.json.get("name") if isinstance(ex.json, dict) else None


@pytest.mark.req("IDEM-OPTIONAL-ROUTES")
def test_recipient_delete_without_key_runs_every_time(api: Api, contract: Contract, unique: Unique) -> None:
    """DELETE without a key runs (200); repeated without a key it is served again, not refused for the missing
    key: 200 or 404 NOT_FOUND, as the spec does not show what deleting a deleted recipient answers ("200, 404";
    `deletedAt`). A 404 is the repeat run finding no recipient; a 200 cannot be told from a replay of the first
    answer (the DELETE body is not shown), so the A, B, A PATCH test above is the one that catches a replay."""
    recipient_id = create_recipient(api, contract, unique)["id"]
    expect_status(api.op("deleteBeneficiary", recipientId=recipient_id, idempotency_key=None), 200,
                  "recipient DELETE without an Idempotency-Key runs")
    again = api.op("deleteBeneficiary", recipientId=recipient_id, idempotency_key=None)
    accepted = "accepted: 200, the recipient deleted again, or 404 NOT_FOUND, no recipient to delete"
    if again.status == 404:
        expect_error(again, 404, "NOT_FOUND", f"the same DELETE again without a key ({accepted}; seen: 404)")
    else:
        expect_status(again, 200, f"the same DELETE again without a key runs ({accepted})")
