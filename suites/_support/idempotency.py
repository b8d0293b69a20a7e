"""Keyed writes for the idempotency, duplicate-guard and limits suites: product writes under an exact
`Idempotency-Key`, what a key that was taken as a key may answer, and the comparison of a replay with its
original."""

from __future__ import annotations

from payconform.suite import Api, Contract, Exchange, expect_error, expect_status

from .products import product_body
from .profile import success
from .types import Scope, Unique, shared_scope

KEY_CONFLICT_TYPES = ("IDEMPOTENCY_KEY_CONFLICT", "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
_KEYED: dict[Scope, str] = {}  # per organization and mode: the product a worker's keyed writes change


def same_response(first: Exchange, again: Exchange) -> bool:
    """Whether ``again`` repeats ``first``: same status, and every field of the first body unchanged."""
    a, b = first.json, again.json
    return first.status == again.status and isinstance(b, dict) and all(b.get(k) == v for k, v in a.items())


def keyed_product(api: Api, contract: Contract, unique: Unique, key: str) -> Exchange:
    """A product write (a checkout write, so keyed) sent with exactly ``key`` as `Idempotency-Key`, with a fresh
    valid body: the worker's first accepted key creates a product, every later key changes that product's
    description (PATCH), so a key that is taken leaves no new row for the run's cleanup."""
    shared = shared_scope(api)
    if shared in _KEYED:
        return api.op("updateCheckoutProduct", productId=_KEYED[shared],
                      json={"description": f"keyed {unique('desc')}"}, idempotency_key=key)
    ex = api.op("createCheckoutProduct", json=product_body(contract, unique), idempotency_key=key)
    made = ex.json.get("id") if 200 <= ex.status < 300 and isinstance(ex.json, dict) else None
    if isinstance(made, str):
        _KEYED[shared] = made
    return ex


def expect_key_accepted(ex: Exchange, contract: Contract, what: str) -> None:
    """The key was taken as a key: the write ran, or (a short key used before) the key is known (409)."""
    if ex.status == 409:
        expect_error(ex, 409, KEY_CONFLICT_TYPES, f"{what}; a key already in use may answer 409")
    else:
        expect_status(ex, success(contract, ex.op_id or "createCheckoutProduct"), what)
