"""Endpoints > Payout operations, `POST /payouts/{payoutId}/funding/confirm` (`confirmPayoutFunding`).

Every rule of the row: the EVM-shaped `transactionHash`, the sandbox outcomes by its last four digits
(`0001` invalid, `0002` not yet verifiable, otherwise accepted), a refused confirmation leaving the payout
fundable, one transfer funding exactly one payout, `FUNDING_NOT_APPLICABLE` for a balance-funded payout and
`PAYOUT_NOT_FUNDABLE` for a canceled or a completed one. Self-funded payouts come from the profile
(`sandbox.self_funded`).
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status

from .._support.accounts import account_details, method_body
from .._support.answers import member
from .._support.answers import names_field
from .._support.machines import walk
from .._support.payouts import (
    as_created,
    cancel_payout,
    create_payout,
    create_self_funded,
    crypto_corridor,
    payout_body,
    read_payout,
    scenario_destination,
    tx_hash,
)
from .._support.profile import corridors, success
from .._support.realtime import REAL_TIME, Timed
from .._support.types import Unique

CRYPTO_SCOPES = ("read", "write", "crypto_payouts")
NETWORK = "payoutNetwork"  # operator fault pseudo-operation: the payment network a funded payout is handed to
OUTCOMES = {"0001": (400, "FUNDING_TRANSACTION_INVALID", "ERR-FUNDING-TRANSACTION-INVALID"),
            "0002": (409, "FUNDING_NOT_YET_VERIFIABLE", "ERR-FUNDING-NOT-YET-VERIFIABLE")}


def confirm(api: Api, payout_id: str, transaction_hash: str | None) -> Exchange:
    body = {} if transaction_hash is None else {"transactionHash": transaction_hash}
    return api.op("confirmPayoutFunding", payoutId=payout_id, json=body)


def expect_funded(ex: Exchange, payout_id: str) -> None:
    expect_status(ex, 200, "confirming a good funding transaction")
    expect(isinstance(ex.json, dict) and ex.json.get("payoutId") == payout_id,
           f"the confirmation answered {ex.json!r}, not payout {payout_id!r}", ex)


@pytest.mark.req("PAYOUT-REQUIRES-FUNDING", "PAYOUT-T-CREATE")
@pytest.mark.needs("crypto_key", "profile")
def test_a_payout_waiting_on_own_funds_says_so(api_as, contract: Contract, unique: Unique) -> None:
    """`requiresFunding` is true on a payout waiting on the organization's own funds, false on one paid from
    the balance; both start `pending` (read from the create answer where it says so, else from GET
    /orders/{payoutId}: the create answer's body is not shown)."""
    api = api_as("crypto_key")
    own_ex = create_self_funded(api, contract, unique)
    balance_ex = create_payout(api, contract, unique)
    own, balance = as_created(api, own_ex), as_created(api, balance_ex)
    expect(own.get("requiresFunding") is True and own.get("status") == "pending",
           f"the self-funded payout reads requiresFunding {own.get('requiresFunding')!r}, "
           f"status {own.get('status')!r}", own_ex)
    expect(balance.get("requiresFunding") is False,
           f"the balance-funded payout reads requiresFunding {balance.get('requiresFunding')!r}", balance_ex)


@pytest.mark.req("FUND-CONFIRM-OK", "FUND-SANDBOX-HASH-OUTCOMES")
@pytest.mark.needs("crypto_key", "profile")
def test_a_good_transaction_funds_the_payout(api_as, contract: Contract, unique: Unique) -> None:
    """200 with the payout, no longer waiting on funds: it can no longer be canceled."""
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    ex = confirm(api, payout_id, tx_hash())
    expect_funded(ex, payout_id)
    expect(ex.json.get("requiresFunding") is not True, "the funded payout still reads requiresFunding: true", ex)
    expect_error(api.op("cancelPayout", payoutId=payout_id), 400, "PAYOUT_NOT_CANCELABLE",
                 "canceling a payout whose funding was confirmed (it no longer awaits own funds)")


@pytest.mark.breadth
@pytest.mark.req("FUND-HASH-REQUIRED", "FUND-ERRORS")
@pytest.mark.needs("crypto_key", "profile")
@pytest.mark.parametrize("bad", [None, "0x1234", "0x" + "g" * 64, "ab" * 33], ids=["missing", "short", "not-hex", "no-0x"])
def test_the_hash_must_be_evm_shaped(bad: str | None, api_as, contract: Contract, unique: Unique) -> None:
    """A missing or malformed `transactionHash` is 400 VALIDATION_ERROR naming it in `errors` (entries of any
    shape: "a field name such as `cursor` with a reason"); a malformed one may instead be 400
    FUNDING_TRANSACTION_INVALID ("Transaction does not fund this payout"); the payout stays fundable."""
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    types = {"VALIDATION_ERROR"} if bad is None else {"VALIDATION_ERROR", "FUNDING_TRANSACTION_INVALID"}
    err = expect_error(confirm(api, payout_id, bad), 400, types, f"transactionHash {bad!r}")
    expect(err.get("type") != "VALIDATION_ERROR" or names_field(err.get("errors"), "transactionHash"),
           f"`errors` {err.get('errors')!r} does not name transactionHash (accepted: any entry with a string naming it)")
    expect_funded(confirm(api, payout_id, tx_hash()), payout_id)


@pytest.mark.smoke
@pytest.mark.parametrize("last_four", [
    pytest.param(tail, id=tail, marks=pytest.mark.req("FUND-SANDBOX-HASH-OUTCOMES", "FUND-CHAIN-CHECKS", req))
    for tail, (_, _, req) in sorted(OUTCOMES.items())])
@pytest.mark.needs("crypto_key", "profile")
def test_sandbox_refusals_leave_the_payout_fundable(last_four: str, api_as, contract: Contract,
                                                   unique: Unique) -> None:
    """A hash ending `0001` is FUNDING_TRANSACTION_INVALID, `0002` FUNDING_NOT_YET_VERIFIABLE; nothing is
    recorded, so the payout reads the same `requiresFunding` as before it ("True when waiting on the
    organization's own funds") and a good transfer then funds it."""
    status, error_type, _ = OUTCOMES[last_four]
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    waiting = read_payout(api, payout_id).json.get("requiresFunding")
    expect_error(confirm(api, payout_id, tx_hash(last_four)), status, error_type, f"a hash ending {last_four}")
    after = read_payout(api, payout_id)
    expect(after.json.get("requiresFunding") == waiting,
           f"a confirmation refused with {error_type} changed the payout's requiresFunding from {waiting!r} to "
           f"{after.json.get('requiresFunding')!r}: a refused confirmation records nothing", after)
    expect_funded(confirm(api, payout_id, tx_hash()), payout_id)


@pytest.mark.req("ERR-FUNDING-NOT-YET-VERIFIABLE")
@pytest.mark.needs("crypto_key", "profile")
def test_a_hash_not_yet_verifiable_is_confirmed_again_later(api_as, contract: Contract, unique: Unique) -> None:
    """FUNDING_NOT_YET_VERIFIABLE is "Not mined or readable yet; confirm the same hash later": the same hash sent
    again (a new key and `X-Allow-Duplicate: true`, so the duplicate guard lets it run) is read again, and in the
    sandbox its last four digits still pick `0002`: 409 FUNDING_NOT_YET_VERIFIABLE again, never a refusal of
    that hash for good."""
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    pending = tx_hash("0002")
    expect_error(confirm(api, payout_id, pending), 409, "FUNDING_NOT_YET_VERIFIABLE", "a hash ending 0002")
    again = api.op("confirmPayoutFunding", payoutId=payout_id, json={"transactionHash": pending},
                   headers={"X-Allow-Duplicate": "true"})
    expect_error(again, 409, "FUNDING_NOT_YET_VERIFIABLE", "the same hash ending 0002 confirmed again later")


@pytest.mark.smoke
@pytest.mark.req("FUND-ALREADY-USED", "ERR-FUNDING-TRANSACTION-ALREADY-USED", "FUND-SANDBOX-REUSE")
@pytest.mark.needs("crypto_key", "profile")
def test_one_transfer_funds_one_payout(api_as, contract: Contract, unique: Unique) -> None:
    """The hash that funded payout A, confirmed for payout B: 409 FUNDING_TRANSACTION_ALREADY_USED whose
    `detail` names A; B stays unfunded."""
    api = api_as("crypto_key")
    first = create_self_funded(api, contract, unique).json["payoutId"]
    second = create_self_funded(api, contract, unique).json["payoutId"]
    used = tx_hash()
    expect_funded(confirm(api, first, used), first)
    err = expect_error(confirm(api, second, used), 409, "FUNDING_TRANSACTION_ALREADY_USED",
                       "a transaction that already funded another payout")
    expect(first.lower() in str(err.get("detail", "")).lower(),
           f"`detail` {err.get('detail')!r} does not name the payout the transaction funded ({first!r})")
    expect_funded(confirm(api, second, tx_hash()), second)


@pytest.mark.smoke
@pytest.mark.req("ERR-FUNDING-NOT-APPLICABLE")
@pytest.mark.needs("profile")
def test_a_balance_funded_payout_takes_no_funding(api, contract: Contract, unique: Unique) -> None:
    """Confirming funding of a payout paid from the balance: 501 FUNDING_NOT_APPLICABLE."""
    payout_id = create_payout(api, contract, unique).json["payoutId"]
    expect_error(confirm(api, payout_id, tx_hash()), 501, "FUNDING_NOT_APPLICABLE",
                 "funding a payout that settles from the balance")


@pytest.mark.smoke
@pytest.mark.req("ERR-PAYOUT-NOT-FUNDABLE", "FUND-ERRORS")
@pytest.mark.needs("crypto_key", "profile")
def test_a_canceled_payout_is_not_fundable(api_as, contract: Contract, unique: Unique) -> None:
    """Confirming funding of a canceled payout: 400 PAYOUT_NOT_FUNDABLE; of an unknown payout: 404 NOT_FOUND."""
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    cancel_payout(api, payout_id, "setup: canceling the payout")
    expect_error(confirm(api, payout_id, tx_hash()), 400, "PAYOUT_NOT_FUNDABLE", "funding a canceled payout")
    expect_error(confirm(api, unique("po-unknown"), tx_hash()), 404, "NOT_FOUND", "funding an unknown payout")


@pytest.mark.req("ERR-PAYOUT-NOT-FUNDABLE", "FUND-ERRORS")
@pytest.mark.needs("crypto_key", "profile")
def test_a_completed_payout_is_not_fundable(request: pytest.FixtureRequest, contract: Contract,
                                           unique: Unique) -> None:
    """PAYOUT_NOT_FUNDABLE is "Canceled or finished": a self-funded payout funded and followed until it is
    `completed` (on a fresh organization's clock where there is one, else in real time), confirmed again with
    another transfer: 400 PAYOUT_NOT_FUNDABLE, and it stays `completed`."""
    timed = _crypto_timed(request)
    payout_id = create_self_funded(timed.api, contract, unique).json["payoutId"]
    expect_funded(confirm(timed.api, payout_id, tx_hash()), payout_id)
    readings = walk(timed.api, timed.clock, timed.org_id, contract, payout_id,
                    until=lambda rs: rs[-1].status in ("completed", "failed"))
    if readings[-1].status != "completed":
        pytest.skip(f"the funded payout went {[r.status for r in readings]}, never `completed`: no finished payout "
                    "to fund")
    ex = confirm(timed.api, payout_id, tx_hash())
    expect_error(ex, 400, "PAYOUT_NOT_FUNDABLE", "funding a completed payout with another transfer")
    status = read_payout(timed.api, payout_id).json.get("status")
    expect(status == "completed", f"a refused funding of a completed payout left it {status!r}", ex)


def _crypto_timed(request: pytest.FixtureRequest) -> Timed:
    """A key holding `crypto_payouts` and how its organization's time passes: a fresh organization and its
    operator clock where there is one, else the target's crypto key in real time."""
    try:
        clock = request.getfixturevalue("clock")
        return Timed(request.getfixturevalue("fresh_org")(scopes=CRYPTO_SCOPES).api, clock)
    except pytest.skip.Exception:
        return Timed(request.getfixturevalue("api_as")("crypto_key"), REAL_TIME)


@pytest.mark.req("FUND-IDEM-HEADERS")
@pytest.mark.needs("crypto_key", "profile")
def test_confirm_needs_a_key_and_takes_allow_duplicate(api_as, contract: Contract, unique: Unique) -> None:
    """Without `Idempotency-Key`: 400 IDEMPOTENCY_KEY_REQUIRED and the payout still awaits funds; with a key
    and `X-Allow-Duplicate: true`: 200, funded."""
    api = api_as("crypto_key")
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]
    body = {"transactionHash": tx_hash()}
    expect_error(api.op("confirmPayoutFunding", payoutId=payout_id, json=body, idempotency_key=None), 400,
                 "IDEMPOTENCY_KEY_REQUIRED", "confirming funding without an Idempotency-Key")
    expect(read_payout(api, payout_id).json.get("requiresFunding") is True,
           "the confirmation refused for its missing key funded the payout")
    expect_funded(api.op("confirmPayoutFunding", payoutId=payout_id, json=body,
                         headers={"X-Allow-Duplicate": "true"}), payout_id)


@pytest.mark.req("FUND-OUTCOME-UNKNOWN", "IDEM-OUTCOME-UNKNOWN")
@pytest.mark.needs("operator", "profile")
def test_outcome_unknown_read_the_order_never_a_new_key(fresh_org, operator, contract: Contract,
                                                       unique: Unique) -> None:
    """The payment network does not answer when the funded payout is handed to it (the operator breaks that
    dependency, `timeout` on `payoutNetwork`; the target chooses its answer): the outcome is unknown, 500
    PAYOUT_OUTCOME_UNKNOWN; the order can be read; the key is kept, so confirming again under it answers 409
    and records nothing more. A target that answers 200 hands the payout to the network after answering, so
    no outcome was unknown at the confirmation: the test skips there."""
    org = fresh_org(scopes=CRYPTO_SCOPES)
    payout_id = create_self_funded(org.api, contract, unique).json["payoutId"]
    body, key = {"transactionHash": tx_hash()}, unique("key")
    operator.inject_fault(org.org_id, NETWORK, "timeout")
    first = org.api.op("confirmPayoutFunding", payoutId=payout_id, json=body, idempotency_key=key)
    if first.status == 200:
        pytest.skip("the confirmation answered 200 while the payment network did not answer: the target hands the "
                    "funded payout over after answering, so its outcome was never unknown at the confirmation")
    expect_error(first, 500, "PAYOUT_OUTCOME_UNKNOWN", "a confirmation whose payout the network never acknowledged")
    before = read_payout(org.api, payout_id).json
    expect_error(org.api.op("confirmPayoutFunding", payoutId=payout_id, json=body, idempotency_key=key), 409,
                 "PAYOUT_OUTCOME_UNKNOWN", "the same confirmation again under its kept key")
    after = read_payout(org.api, payout_id).json
    expect(after.get("requiresFunding") == before.get("requiresFunding"),
           f"confirming again under the kept key changed requiresFunding from {before.get('requiresFunding')!r} "
           f"to {after.get('requiresFunding')!r}")


@pytest.mark.req("FUND-SOLANA")
@pytest.mark.needs("crypto_key", "profile")
def test_solana_funding_is_verified_the_same_way(api_as, contract: Contract, unique: Unique) -> None:
    """A self-funded payout to a Solana wallet (profile `sandbox.solana`): a hash ending `0001` is
    FUNDING_TRANSACTION_INVALID, a good one funds it."""
    api = api_as("crypto_key")
    corridor = crypto_corridor(contract)
    details = {**account_details(contract, corridor), "chain": contract.profile["sandbox"]["solana"]["chain"]}
    destination = scenario_destination(api, contract, unique, method=method_body(contract, corridor, details))
    ex = api.op("createPayout", json=payout_body(contract, destination, unique("ref"),
                                                 destinationCurrency=corridors(contract)[corridor]["currency"]))
    expect_status(ex, success(contract, "createPayout") - {202}, "a self-funded payout to a Solana wallet")
    payout_id = member(ex, "payoutId")
    expect_error(confirm(api, payout_id, tx_hash("0001")), 400, "FUNDING_TRANSACTION_INVALID",
                 "a Solana funding hash ending 0001")
    expect_funded(confirm(api, payout_id, tx_hash()), payout_id)
