"""Endpoints rule 1: "A 401 or 403 means nothing ran.", for each refusal of a write in the organization itself.

The write is a checkout product create. Product names are unique among active products, so after the
refused create of name N, no active product may be called N (`products.expect_name_free`): a 409 shows that
the refused call created the product after all.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, Target, expect_error

from .._support.products import expect_name_free, product_body

# refusal -> (credential sent, or None for no x-api-key; status; type; requirement of that refusal)
REFUSALS: dict[str, tuple[str | None, int, str, str]] = {
    "missing-key": (None, 401, "UNAUTHORIZED", "AUTH-MISSING-KEY"),
    "revoked-key": ("revoked_key", 401, "UNAUTHORIZED", "AUTH-REVOKED-KEY"),
    "expired-key": ("expired_key", 401, "KEY_EXPIRED", "AUTH-KEY-EXPIRED"),
    "pinned-key": ("pinned_key", 401, "KEY_IP_NOT_ALLOWED", "AUTH-KEY-IP-PINNED"),
    "read-only-key": ("read_only_key", 403, "INSUFFICIENT_SCOPE", "AUTH-READ-ONLY-NO-SPEND"),
}
CASES = [pytest.param(name, marks=[pytest.mark.req("AUTH-REFUSED-NOTHING-RAN", req),
                                   *([pytest.mark.needs(cred)] if cred else [])], id=name)
         for name, (cred, _, _, req) in REFUSALS.items()]


@pytest.mark.parametrize("refusal", CASES)
def test_refused_create_ran_nothing(refusal: str, api: Api, target: Target, contract: Contract, unique) -> None:
    """The refused product create answers its documented 401/403, and the name it asked for is still free."""
    credential_name, status, type_, _ = REFUSALS[refusal]
    credential = target.credential(credential_name) if credential_name else None
    body = product_body(contract, unique)
    expect_error(api.op("createCheckoutProduct", json=body, credential=credential), status, type_)
    expect_name_free(api, body, f"the {refusal} create, with a working key")
