"""States and transitions > Payout, row "cancel payout": only a payout awaiting the organization's own funds.

| `pending` | cancel payout | only a payout awaiting the organization's own funds can be canceled (else
`PAYOUT_NOT_CANCELABLE`) | `canceled` | `payout.canceled`; money had not moved |

A payout waiting on own funds comes from the profile (`sandbox.self_funded`: a crypto payout made with a
key holding `crypto_payouts`); a balance-funded payout is the profile's ordinary `createPayout` body.
"""

from __future__ import annotations

import pytest

from payconform.suite import Contract, expect, expect_error

from .._support.answers import find_member
from .._support.events import feed
from .._support.payouts import as_created, cancel_payout, create_payout, create_self_funded, read_payout
from .._support.types import Unique


@pytest.mark.req("PAYOUT-T-CANCEL", "PAYOUT-CANCEL-ROUTE", "PAYOUT-COMPLETED-AT-FAILED-CANCELED",
                 "PAYOUT-FUNDS-RETURNED", "ERR-PAYOUT-NOT-CANCELABLE")
@pytest.mark.needs("crypto_key", "profile")
def test_a_payout_awaiting_own_funds_is_canceled(api_as, contract: Contract, unique: Unique) -> None:
    """Cancel answers a 2xx (its response is not shown; a `status` in it, if any, is `canceled`); reads show the
    payout `canceled`, with `completedAt` null and a boolean `fundsReturned` ("on failed, returned and canceled
    payloads"); the event feed holds a `payout.canceled` about it."""
    api = api_as("crypto_key")
    payout = as_created(api, create_self_funded(api, contract, unique))
    expect(payout.get("requiresFunding") is True, "setup: the self-funded payout does not have requiresFunding: true")
    ex = cancel_payout(api, payout["payoutId"], "canceling a payout awaiting the organization's own funds")
    answer = ex.json if isinstance(ex.json, dict) else {}
    expect(answer.get("status") in (None, "canceled"), f"the cancel answered status {answer.get('status')!r}", ex)
    after = read_payout(api, payout["payoutId"])
    expect(after.json.get("status") == "canceled", f"after the cancel the payout reads {after.json.get('status')!r}",
           after)
    expect(after.json.get("completedAt") is None, "a canceled payout has a `completedAt`", after)
    expect(isinstance(after.json.get("fundsReturned"), bool),
           f"the canceled payout has fundsReturned {after.json.get('fundsReturned')!r}, not a boolean: it is carried "
           "\"on failed, returned and canceled payloads\"", after)
    def about(event: dict) -> bool:
        return find_member(event.get("data"), "payoutId") == payout["payoutId"]

    announced = feed(api, found=lambda rows: any(map(about, rows)), type="payout.canceled")
    expect(any(map(about, announced)),
           "the event feed holds no `payout.canceled` event for the canceled payout; the cancel row reads "
           "\"`canceled` | `payout.canceled`\"", after)


@pytest.mark.smoke
@pytest.mark.req("PAYOUT-T-CANCEL", "ERR-PAYOUT-NOT-CANCELABLE")
@pytest.mark.needs("profile")
def test_a_balance_funded_payout_is_not_cancelable(api, contract: Contract, unique: Unique) -> None:
    """Cancel of a payout paid from the balance: 400 PAYOUT_NOT_CANCELABLE, and the payout is not canceled."""
    payout = create_payout(api, contract, unique).json
    expect_error(api.op("cancelPayout", payoutId=payout["payoutId"]), 400, "PAYOUT_NOT_CANCELABLE",
                 "canceling a payout that is not awaiting own funds")
    after = read_payout(api, payout["payoutId"])
    expect(after.json.get("status") != "canceled", "the refused cancel canceled the payout anyway", after)


@pytest.mark.req("PAYOUT-STATES")
@pytest.mark.needs("crypto_key", "profile")
def test_a_canceled_payout_reads_the_spec_spelling(api_as, contract: Contract, unique: Unique) -> None:
    """The states are "`pending`, `processing`, `completed`, `failed`, `canceled`": a canceled payout reads
    exactly `canceled`, not another spelling of it (the cancel's own answer is not shown)."""
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    cancel_payout(api, payout_id, "canceling a payout awaiting the organization's own funds")
    after = read_payout(api, payout_id)
    expect(after.json.get("status") == "canceled",
           f"the canceled payout reads status {after.json.get('status')!r}, not `canceled`", after)
