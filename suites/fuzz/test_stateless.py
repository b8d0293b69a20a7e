"""Stateless fuzzing of every operation the target serves, from the published contract documents.

For each operation schemathesis sends the contract's examples, its coverage cases (boundaries, each
constraint broken in turn, undocumented methods) and ``--fuzz-budget`` generated requests (default 5),
positive and negative. Every answer goes through the built-in checks (no server error, documented status,
content type, headers, response schema, negative data refused, missing Idempotency-Key refused, auth
enforced, ...) and the suite's checks (``checks.py``: error body, request id, catalog status, decimal-string
money, non-positive amounts refused). Which operations run comes from ``fuzz.yaml`` and the target's
``profile.fuzz``; one that the target does not serve is skipped as not implemented.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, fuzz_session

from .checks import REQUIREMENTS

SESSION = fuzz_session()
PAYOUTS = SESSION.schema("payouts")
CHECKOUT = SESSION.schema("checkout")


@pytest.mark.sweep
@pytest.mark.req(*REQUIREMENTS)
@PAYOUTS.parametrize()
@SESSION.settings.hypothesis_settings()
def test_payouts_contract(case, anon: Api) -> None:
    """Payouts, recipients, balance and ledger operations answer every fuzzed request as the contract says."""
    SESSION.run_case(case, anon)


@pytest.mark.sweep
@pytest.mark.req(*REQUIREMENTS)
@CHECKOUT.parametrize()
@SESSION.settings.hypothesis_settings()
def test_checkout_contract(case, anon: Api) -> None:
    """Checkout operations answer every fuzzed request as the contract says."""
    SESSION.run_case(case, anon)
