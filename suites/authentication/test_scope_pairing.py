"""Authentication > Mode A rule 4: `crypto_payouts` and `refunds` are granted "only alongside `write`"
(Resources > API key, row Scopes, names the four scopes).

Keys are issued in the dashboard (the operator). A key asking for either scope alongside `write` is issued
holding it: its use of the scope is not refused for lacking it. A key asking for either scope without `write`
must be refused at issue; an implementation that issues it anyway is tolerated only if the key still cannot
spend. With keys alone, the target's key holding each scope is shown to hold `write` too.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, OperatorError, expect, expect_error_body, expect_status

from .._support.balance import fund_sandbox
from .._support.payments import refund
from .._support.payouts import crypto_payout_body, pay
from .._support.recipients import create_recipient, recipient_body

CASES = [pytest.param("crypto_payouts", marks=[pytest.mark.req("KEY-CRYPTO-NEEDS-WRITE", "KEY-SCOPES"),
                                                pytest.mark.needs("profile")], id="crypto_payouts"),
         pytest.param("refunds", marks=pytest.mark.req("KEY-REFUNDS-NEEDS-WRITE", "KEY-SCOPES"), id="refunds")]


def _holds_scope(api: Api, scope: str, contract: Contract, unique) -> None:
    """The key's use of `scope` is not refused for lacking it: a crypto payout does not answer
    CRYPTO_PAYOUTS_DISABLED; a refund does not answer INSUFFICIENT_SCOPE (of a payment id no payment has, so
    only the scope is at stake and nothing is refunded)."""
    if scope == "crypto_payouts":
        ex, lacking = api.op("createPayout", json=crypto_payout_body(api, contract, unique)), "CRYPTO_PAYOUTS_DISABLED"
    else:
        ex, lacking = refund(api, contract, unique("pay"), "100"), "INSUFFICIENT_SCOPE"
    answered = ex.json.get("type") if isinstance(ex.json, dict) else None
    expect(answered != lacking, f"a key issued with read, write and {scope} answered {lacking}, as if "
           f"issued without {scope}", ex)


def _cannot_spend(org_api: Api, key: str, scope: str, contract: Contract, unique) -> None:
    """A fully payable payout (funded balance, payable recipient) sent with `key` is refused."""
    fund_sandbox(org_api, contract)
    recipient = create_recipient(org_api, contract, unique)
    with org_api.with_credential(key) as lone:
        ex = pay(lone, contract, unique, recipient["paymentMethods"][0]["destinationAccountId"])
    expect(400 <= ex.status < 500, f"a payout sent with a key of scopes [read, {scope}] (no `write`) was not refused",
           ex)
    expect_error_body(ex)


HELD = [pytest.param("crypto_key", "crypto_payouts", id="crypto_payouts",
                     marks=[pytest.mark.req("KEY-CRYPTO-NEEDS-WRITE"), pytest.mark.needs("crypto_key")]),
        pytest.param("refunds_key", "refunds", id="refunds",
                     marks=[pytest.mark.req("KEY-REFUNDS-NEEDS-WRITE"), pytest.mark.needs("refunds_key")])]


@pytest.mark.parametrize(("credential", "scope"), HELD)
def test_a_key_holding_the_scope_holds_write(credential: str, scope: str, api_as, contract: Contract,
                                             unique) -> None:
    """The target's key that holds the scope (its `credentials` entry: read, write and the scope) holds `write`
    beside it, "only alongside `write`": a plain write with it, a new recipient, is not refused."""
    ex = api_as(credential).op("createBeneficiary", json=recipient_body(contract, unique))
    expect(ex.status < 400, f"a recipient created with the target's {credential}, a key holding `{scope}` \"only "
           "alongside `write`\", was refused: the key does not hold `write`", ex)


@pytest.mark.parametrize("scope", CASES)
@pytest.mark.needs("operator")
def test_scope_only_alongside_write(scope: str, fresh_org, contract: Contract, unique) -> None:
    """Issuing [read, scope] is refused while [read, write, scope] is issued, works and holds the scope; if
    [read, scope] is issued after all, that key cannot make a payout."""
    org = fresh_org()
    paired = org.issue_key(mode="test", scopes=["read", "write", scope])
    expect_status(org.api.op("getBalance", credential=paired), 200, f"a key issued with read, write and {scope}")
    with org.api.with_credential(paired) as holder:
        _holds_scope(holder, scope, contract, unique)
    try:
        lone = org.issue_key(mode="test", scopes=["read", scope])
    except OperatorError:
        return  # refused at issue, as required
    _cannot_spend(org.api, lone, scope, contract, unique)
