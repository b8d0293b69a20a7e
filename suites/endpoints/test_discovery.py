"""Resources > Disclosure and funding account shapes: the `FundingAccount` and the `PaymentReason` values.

- "`FundingAccount`: `settlesTo` in `provider_balance`, `wallet`." The operation that lists them
  (`getFundingAccounts`) has no path in the spec: path and list envelope are the profile's. In the sandbox
  "the balance is one provider-held USD figure" (Endpoints > Balance and ledger), so one funding account
  settles to `provider_balance`; values beyond the two listed are tolerated.
- "`PaymentReason` values formerly listed inline in the schema (now served by the payment-reasons
  operation)": GET /payment-reasons serves the 18 values (the contract's `PaymentReason` enum). The
  requirement is `level: observe`: a missing or extra value is reported as a warning.
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect, expect_status

from .._support.profile import items


@pytest.mark.req("DISC-FUNDING-ACCOUNT")
@pytest.mark.needs("profile")
def test_funding_accounts_say_where_they_settle(api, contract: Contract) -> None:
    """Every funding account carries `settlesTo`; the sandbox's provider-held balance is one of them."""
    ex = api.op("getFundingAccounts")
    expect_status(ex, 200, "listing the funding accounts")
    accounts = items(contract, "getFundingAccounts", ex)
    settles = [a.get("settlesTo") if isinstance(a, dict) else None for a in accounts]
    expect(settles and all(isinstance(s, str) and s for s in settles),
           f"the funding accounts' `settlesTo` values are {settles}", ex)
    expect("provider_balance" in settles,
           f"no funding account settles to provider_balance (the sandbox balance is provider-held): {settles}", ex)


@pytest.mark.req("DISC-PAYMENT-REASONS")
def test_payment_reasons_are_the_listed_values(api, contract: Contract) -> None:
    """GET /payment-reasons serves exactly the 18 `PaymentReason` values the spec lists."""
    listed = set(contract.openapi("payouts")["components"]["schemas"]["PaymentReason"]["enum"])
    ex = api.op("listPaymentReasons")
    expect_status(ex, 200, "GET /payment-reasons")
    served = {r for r in items(contract, "listPaymentReasons", ex) if isinstance(r, str)}
    expect(served == listed, f"missing {sorted(listed - served)}, extra {sorted(served - listed)}", ex)
