"""Endpoints rule 1: "Authenticated routes can answer 401 (`UNAUTHORIZED`, `KEY_EXPIRED`,
`KEY_IP_NOT_ALLOWED`)": each of the three refusals is a 401 on every route sampled, reads and writes of each
prefix alike (payments, recipients, checkout).
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Contract, expect_error

from .._support.products import product_body
from .._support.recipients import recipient_body

REFUSALS = {"revoked_key": "UNAUTHORIZED", "expired_key": "KEY_EXPIRED", "pinned_key": "KEY_IP_NOT_ALLOWED"}


def _samples(contract: Contract, unique) -> list[tuple[str, Any]]:
    """(operation, body) of one read per prefix and one write each on recipients and checkout."""
    return [("getBalance", None), ("listBeneficiaries", None), ("listCheckoutProducts", None),
            ("listAuditEvents", None), ("createBeneficiary", recipient_body(contract, unique)),
            ("createCheckoutProduct", product_body(contract, unique))]


@pytest.mark.req("AUTH-COMMON-401")
@pytest.mark.parametrize("credential", [pytest.param(name, marks=pytest.mark.needs(name), id=name)
                                        for name in REFUSALS])
def test_key_refusals_are_401_on_every_route(credential: str, api_as, contract: Contract, unique) -> None:
    """The run's revoked, expired and pinned keys on each sampled route: 401 with their type."""
    client = api_as(credential)
    for op_id, body in _samples(contract, unique):
        kw = {} if body is None else {"json": body}
        expect_error(client.op(op_id, **kw), 401, REFUSALS[credential], f"{op_id} with the {credential}")
