"""Mutants of the Endpoints part for the balance history's entries and rules (GET /balance/history and the
balance history rules); its page size, a malformed `since` and a foreign cursor are `ledger.py`'s.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ...resources import balances, ledger
from ...core.errors import ApiError
from ...resources.ledger import HISTORY_MAX_ORDERS, order_count
from ...states.lifecycle import PROCESSING, Step
from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant
from ..rewrites import rewrite_refusals
from ..support.ledger import HISTORY, bound_moved_back, rewrite_entries, with_query

if TYPE_CHECKING:
    from ...reference import Reference


def _listed_too(ref: Reference, extra: Any) -> None:
    """Balance history lists `extra(call)` entries besides its own."""
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["entries"] += extra(call)
        return reply


@mutant("history-topup-pending", reqs=["HIST-ENTRY-SANDBOX-TOPUP"],
        doc="A sandbox top-up is listed in the balance history as `PENDING`, not `COMPLETED`.")
def history_topup_pending(ref: Reference) -> None:
    def pending(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            if entry["type"] == "funding":
                entry["status"] = "PENDING"

    rewrite_entries(ref, pending)


@mutant("history-since-overrides-cursor", reqs=["HIST-CURSOR-XOR-SINCE"],
        doc="Balance history takes `cursor` and `since` together, ignoring `since`, instead of a 400.")
def history_since_overrides_cursor(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        return original(with_query(call, since=None) if call.query_params.get("cursor") else call)


@mutant("history-cursor-and-since-bad-request", reqs=["HIST-CURSOR-XOR-SINCE"],
        doc="Balance history refuses `cursor` and `since` together with 400 BAD_REQUEST, not VALIDATION_ERROR.")
def history_cursor_and_since_bad_request(ref: Reference) -> None:
    def bad_request(call: Call, err: ApiError) -> ApiError | None:
        both = {"cursor", "since"} <= set(call.query_params)
        return ApiError("BAD_REQUEST", err.detail) if both and err.type == "VALIDATION_ERROR" else None

    rewrite_refusals(ref, HISTORY, bad_request)


@mutant("history-reversal-missing", reqs=["HIST-REVERSAL"],
        doc="A failed or returned payout's money comes back without a `reversal` entry in the balance history.")
def history_reversal_missing(ref: Reference) -> None:
    rewrite_entries(ref, lambda body: body.update(entries=[e for e in body["entries"] if e["type"] != "reversal"]))


@mutant("history-reversal-replaces-debit", reqs=["HIST-REVERSAL"],
        doc="A payout whose money comes back loses its `payout` debit entry: the `reversal` stands in its place.")
def history_reversal_replaces_debit(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        returned = {row["order_id"] for row in ref.store.all(
            "SELECT order_id FROM balance_transactions WHERE org_id = ? AND mode = ? AND type = 'payout_return'",
            (call.org_id, call.mode))}
        reply.body["entries"] = [e for e in reply.body["entries"]
                                 if not (e["type"] == "payout" and e["orderId"] in returned)]
        return reply


@mutant("history-payout-not-debited", reqs=["HIST-ENTRY-PAYOUT-DEBITED"],
        doc="A payout drawn from the balance is listed in the history as `COMPLETED` instead of `DEBITED`.")
def history_payout_not_debited(ref: Reference) -> None:
    def completed(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            if entry["type"] == "payout":
                entry["status"] = "COMPLETED"

    rewrite_entries(ref, completed)


@mutant("history-size-limit-off-by-one", reqs=["HIST-TOO-LARGE", "HIST-SIZE-LIMIT"],
        doc="Balance history answers 413 HISTORY_TOO_LARGE already at exactly 100,000 orders.")
def history_size_limit_off_by_one(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        if order_count(ref.store, call.org_id, call.mode) >= HISTORY_MAX_ORDERS:
            raise ApiError("HISTORY_TOO_LARGE")
        return original(call)


@mutant("history-size-unlimited", reqs=["HIST-TOO-LARGE", "ERR-HISTORY-TOO-LARGE"],
        doc="Balance history answers however many orders the organization holds, never 413.")
def history_size_unlimited(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "HISTORY_TOO_LARGE":
                raise
            return Reply(200, {"entries": [], "hasMore": False})


@mutant("history-pending-deposit-listed", reqs=["HIST-ENTRY-DEPOSIT"],
        doc="A deposit to the funding account is in the balance history while still pending.")
def history_pending_deposit_listed(ref: Reference) -> None:
    def pending(call: Call) -> list[dict[str, Any]]:
        rows = ref.store.all("SELECT * FROM deposits WHERE org_id = ? AND mode = ? AND status = 'pending'",
                             (call.org_id, call.mode))
        return [{"id": row["id"], "type": "funding", "status": "COMPLETED", "amount": row["amount"],
                 "currency": row["currency"]} for row in rows]

    _listed_too(ref, pending)


@mutant("compliance-rejection-reversed", reqs=["HIST-COMPLIANCE-STAYS-DEBITED"],
        doc="A payout rejected by compliance gets its money back (a `reversal`) instead of staying debited.")
def compliance_rejection_reversed(ref: Reference) -> None:
    ref.lifecycle.timelines["0005"] = (PROCESSING, Step(30, "payout.failed", "failed", "compliance_rejected", True))


@mutant("wallet-payout-debited", reqs=["HIST-WALLET-PAYOUT-NOTHING"],
        doc="A payout funded from the own wallet is also debited from the balance (a `payout` entry).")
def wallet_payout_debited(ref: Reference) -> None:
    @around(ref, "createPayout")
    def create_payout(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if isinstance(reply.body, dict) and reply.body.get("requiresFunding"):
            ledger.post(call, type="payout", amount=-Decimal(reply.body["sourceAmount"]),
                        currency=reply.body["sourceCurrency"], order_id=reply.body["payoutId"])
        return reply


@mutant("wallet-cancel-reversed", reqs=["HIST-WALLET-PAYOUT-NOTHING"],
        doc="A payout funded from the own wallet and canceled before funding gains a `reversal` `CANCELED` entry, "
            "though nothing was debited.")
def wallet_cancel_reversed(ref: Reference) -> None:
    def canceled(call: Call) -> list[dict[str, Any]]:
        rows = ref.store.all("SELECT * FROM payouts WHERE org_id = ? AND mode = ? AND requires_funding = 1"
                             " AND status = 'canceled'", (call.org_id, call.mode))
        return [{"id": f"cancel-{row['id']}", "type": "reversal", "status": "CANCELED",
                 "amount": row["source_amount"], "currency": row["source_currency"], "orderId": row["id"]}
                for row in rows]

    _listed_too(ref, canceled)


@mutant("untracked-movement-listed", reqs=["HIST-UNTRACKED-NETWORK"],
        doc="A movement on a network whose balance is not tracked is listed as a balance history entry.")
def untracked_movement_listed(ref: Reference) -> None:
    def movement(call: Call) -> list[dict[str, Any]]:
        if ledger.flag(ref.store, call.org_id, call.mode, ledger.UNTRACKED) is None:
            return []
        return [{"id": "untracked", "type": "funding", "status": "COMPLETED"}]

    _listed_too(ref, movement)


@mutant("untracked-balance-after-published", reqs=["HIST-UNTRACKED-NETWORK"],
        doc="After a movement on an untracked network, balance history still publishes `balanceAfter`, with no "
            "`note`.")
def untracked_balance_after_published(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if reply.body.get("note") == balances.UNTRACKED_NOTE:
            del reply.body["note"]
            for entry in reply.body["entries"]:
                row = ref.store.one("SELECT balance_after FROM balance_transactions WHERE id = ?", (int(entry["id"]),))
                entry["balanceAfter"] = row["balance_after"] if row is not None else None
        return reply


@mutant("history-since-inclusive", reqs=["HIST-SINCE"],
        doc="Balance history `since=T` also lists the entries settled exactly at T.")
def history_since_inclusive(ref: Reference) -> None:
    bound_moved_back(ref, HISTORY, "since")


@mutant("history-entries-as-data", reqs=["HIST-GET"],
        doc="Balance history answers its entries under `data`, as the other lists do, not `entries`.")
def history_entries_as_data(ref: Reference) -> None:
    rewrite_entries(ref, lambda body: body.update(data=body.pop("entries")))
