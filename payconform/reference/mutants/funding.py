"""Mutants of self-funded payouts: `requiresFunding`, `confirmPayoutFunding` and `cancelPayout`.

Each wraps one operation's handler on this server instance only; a mutant that must remember something
across calls (a refused confirmation that spends the payout) keeps it in its own closure.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ApiError
from ..operation import Call, Reply
from ..funding import HASH
from ..payout_view import payout_json
from ..payouts import find
from . import mutant
from .payouts import rewrite_reads

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]
CONFIRM = "confirmPayoutFunding"


def around(ref: Reference, op_id: str) -> Callable[[Callable[[Handler, Call], Reply]], None]:
    """Decorator: `f(original, call)` becomes the handler of `op_id`."""
    def install(f: Callable[[Handler, Call], Reply]) -> None:
        ref.wrap_handler(op_id, lambda original: lambda call: f(original, call))
    return install


def sent_hash(call: Call) -> Any:
    body = call.json()
    return body.get("transactionHash") if isinstance(body, dict) else None


def send_hash(call: Call, value: str) -> None:
    call._json = {**call.json(), "transactionHash": value}


def good_hash() -> str:
    return "0x" + secrets.token_hex(30) + "7a1c"


@mutant("self-funded-flag-false", reqs=["PAYOUT-REQUIRES-FUNDING"],
        doc="Every payout reads `requiresFunding: false`, including one waiting on the organization's own funds.")
def _(ref: Reference) -> None:
    def change(p: dict[str, Any]) -> dict[str, Any]:
        return {**p, "requiresFunding": False}

    rewrite_reads(ref, change)

    @around(ref, "createPayout")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body=change(reply.body)) if reply.status == 201 else reply


@mutant("funding-confirm-records-nothing", reqs=["FUND-CONFIRM-OK"],
        doc="A good funding confirmation answers 200 but the payout is left waiting on funds.")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE payouts SET funded_at = NULL, funding_hash = NULL WHERE id = ?",
                      (call.params["payoutId"],))
        return reply


@mutant("funding-hash-shape-unchecked", reqs=["FUND-HASH-REQUIRED"],
        doc="A missing or malformed `transactionHash` is taken as a good transfer.")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        value = sent_hash(call)
        if not (isinstance(value, str) and HASH.fullmatch(value)):
            send_hash(call, good_hash())
        return original(call)


def _sandbox_tail_accepted(tail: str) -> Callable[[Reference], None]:
    def patch(ref: Reference) -> None:
        @around(ref, CONFIRM)
        def _(original: Handler, call: Call) -> Reply:
            value = sent_hash(call)
            if isinstance(value, str) and value.endswith(tail):
                send_hash(call, value[:-4] + "7a1c")
            return original(call)
    return patch


mutant("funding-0001-accepted", reqs=["FUND-SANDBOX-HASH-OUTCOMES", "ERR-FUNDING-TRANSACTION-INVALID"],
       doc="A sandbox hash ending 0001 funds the payout instead of FUNDING_TRANSACTION_INVALID.")(
    _sandbox_tail_accepted("0001"))
mutant("funding-0002-accepted", reqs=["FUND-SANDBOX-HASH-OUTCOMES", "ERR-FUNDING-NOT-YET-VERIFIABLE"],
       doc="A sandbox hash ending 0002 funds the payout instead of FUNDING_NOT_YET_VERIFIABLE.")(
    _sandbox_tail_accepted("0002"))


@mutant("funding-refusal-spends-payout", reqs=["FUND-CHAIN-CHECKS"],
        doc="After a refused confirmation the payout is no longer fundable (PAYOUT_NOT_FUNDABLE).")
def _(ref: Reference) -> None:
    spent: set[str] = set()

    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        payout_id = call.params["payoutId"]
        if payout_id in spent:
            raise ApiError("PAYOUT_NOT_FUNDABLE")
        try:
            return original(call)
        except ApiError as err:
            if err.type in ("FUNDING_TRANSACTION_INVALID", "FUNDING_NOT_YET_VERIFIABLE"):
                spent.add(payout_id)
            raise


@mutant("funding-reuse-allowed", reqs=["FUND-ALREADY-USED", "FUND-SANDBOX-REUSE",
                                       "ERR-FUNDING-TRANSACTION-ALREADY-USED"],
        doc="A transaction that funded one payout also funds another.")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "FUNDING_TRANSACTION_ALREADY_USED":
                raise
            ref.store.run("UPDATE payouts SET funding_hash = funding_hash || ':' || id WHERE funding_hash = ?",
                          (str(sent_hash(call)).lower(),))
            return original(call)


@mutant("funding-reuse-detail-anonymous", reqs=["FUND-ALREADY-USED"],
        doc="FUNDING_TRANSACTION_ALREADY_USED does not name the payout the transaction funded.")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "FUNDING_TRANSACTION_ALREADY_USED":
                raise ApiError(err.type, "This transaction was already used.") from None
            raise


@mutant("funding-not-applicable-as-not-fundable", reqs=["ERR-FUNDING-NOT-APPLICABLE"],
        doc="Funding a balance-funded payout answers 400 PAYOUT_NOT_FUNDABLE instead of 501 FUNDING_NOT_APPLICABLE.")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "FUNDING_NOT_APPLICABLE":
                raise ApiError("PAYOUT_NOT_FUNDABLE") from None
            raise


@mutant("funding-canceled-payout-accepted", reqs=["ERR-PAYOUT-NOT-FUNDABLE", "FUND-ERRORS"],
        doc="Confirming funding of a canceled payout answers 200 with the payout.")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "PAYOUT_NOT_FUNDABLE":
                return Reply(200, payout_json(find(call, call.params["payoutId"])))
            raise


@mutant("cancel-leaves-pending", reqs=["PAYOUT-T-CANCEL", "PAYOUT-CANCEL-ROUTE"],
        doc="Cancel answers the payout `canceled` but it stays pending and awaiting funds.")
def _(ref: Reference) -> None:
    @around(ref, "cancelPayout")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        ref.store.run("UPDATE payouts SET status = 'pending', funds_returned = NULL WHERE id = ?",
                      (call.params["payoutId"],))
        return reply


@mutant("cancel-any-pending", reqs=["ERR-PAYOUT-NOT-CANCELABLE"],
        doc="A balance-funded pending payout can be canceled too.")
def _(ref: Reference) -> None:
    @around(ref, "cancelPayout")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "PAYOUT_NOT_CANCELABLE":
                raise
            ref.store.run("UPDATE payouts SET status = 'canceled', funds_returned = 0 WHERE id = ?",
                          (call.params["payoutId"],))
            return Reply(200, payout_json(find(call, call.params["payoutId"])))


@mutant("payout-canceled-with-completed-at", reqs=["PAYOUT-COMPLETED-AT-FAILED-CANCELED"],
        doc="A canceled payout is read with a `completedAt`, which stays null on canceled payloads.")
def _(ref: Reference) -> None:
    rewrite_reads(ref, lambda p: {**p, "completedAt": p.get("createdAt")} if p.get("status") == "canceled" else p)
