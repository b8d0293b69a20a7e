"""Mutants of the Endpoints part for balances, balance history, balance transactions and audit events.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams

from ...resources import ledger
from ...core.clock import iso, parse_instant
from ...core.errors import ApiError, field_error
from ...resources.ledger import HISTORY_MAX_ORDERS, order_count
from ...states.lifecycle import PROCESSING, Step
from ...core.operation import Call, Reply
from ..patching import Handler, around, body
from ..registry import mutant
from ..rewrites import rewrite_replies
from ..support.ledger import (
    AUDIT, BTX, HISTORY, limit_asked, lists, rewrite_balance, rewrite_entries, unlisted, with_query,
)

if TYPE_CHECKING:
    from ...reference import Reference


def _default_size(ref: Reference, op_id: str, size: str = "20") -> None:
    @around(ref, op_id)
    def handler(original: Handler, call: Call) -> Reply:
        if call.query_params.get("limit") is None:
            call = with_query(call, limit=size)
        return original(call)


def _drop_params(ref: Reference, op_id: str, names: tuple[str, ...]) -> None:
    @around(ref, op_id)
    def handler(original: Handler, call: Call) -> Reply:
        return original(with_query(call, **dict.fromkeys(names)))


def _listed_too(ref: Reference, extra: Any) -> None:
    """Balance history lists `extra(call)` entries besides its own."""
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["entries"] += extra(call)
        return reply


@mutant("fuzz-history-limit-overflow-500", reqs=["LIMIT-HIST-CLAMP"],
        doc="Balance history crashes (500 INTERNAL) on a `limit` beyond 32 bits instead of clamping it.")
def fuzz_history_limit_overflow_500(ref: Reference) -> None:
    @around(ref, "getBalanceHistory")
    def get_balance_history(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit")
        if raw is not None and raw.lstrip("-").isdigit() and abs(int(raw)) >= 2**31:
            raise OverflowError("limit does not fit a 32-bit integer")
        return original(call)


@mutant("fuzz-btx-huge-limit-clamped", reqs=["LIMIT-BTX-REFUSE"],
        doc="Balance transactions clamp a `limit` above 1000 to 100 instead of refusing it (101-1000 still refused).")
def fuzz_btx_huge_limit_clamped(ref: Reference) -> None:
    @around(ref, "listBalanceTransactions")
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit")
        if raw is not None and raw.isdigit() and int(raw) > 1000:
            call.query_params = call.query_params.__class__(
                [(k, "100" if k == "limit" else v) for k, v in call.query_params.multi_items()])
        return original(call)


@mutant("history-limit-refused-out-of-range", reqs=["LIMIT-HIST-CLAMP"],
        doc="Balance history answers 400 for a `limit` outside 1-500 instead of clamping it.")
def history_limit_refused_out_of_range(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        limit = limit_asked(call)
        if limit is not None and not 1 <= limit <= 500:
            raise field_error("limit", "must be between 1 and 500")
        return original(call)


@mutant("btx-limit-clamped", reqs=["LIMIT-BTX-REFUSE"],
        doc="Balance transactions clamp an out-of-range `limit` into 1-100 instead of answering 400.")
def btx_limit_clamped(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        limit = limit_asked(call)
        if limit is not None and not 1 <= limit <= 100:
            call = with_query(call, limit=str(max(1, min(100, limit))))
        return original(call)


@mutant("history-limit-default-20", reqs=["LIMIT-HIST-DEFAULT"], doc="Balance history pages 20 rows by default.")
def history_limit_default_20(ref: Reference) -> None:
    _default_size(ref, HISTORY)


@mutant("btx-limit-default-20", reqs=["LIMIT-BTX-DEFAULT"], doc="Balance transactions page 20 rows by default.")
def btx_limit_default_20(ref: Reference) -> None:
    _default_size(ref, BTX)


@mutant("audit-limit-default-20", reqs=["LIMIT-AUDIT-DEFAULT"], doc="Audit events page 20 rows by default.")
def audit_limit_default_20(ref: Reference) -> None:
    _default_size(ref, AUDIT)


@mutant("history-limit-default-50", reqs=["LIMIT-HIST-DEFAULT"],
        doc="Balance history pages 50 rows by default (the audit events' default), not 100.")
def history_limit_default_50(ref: Reference) -> None:
    _default_size(ref, HISTORY, "50")


@mutant("btx-limit-default-50", reqs=["LIMIT-BTX-DEFAULT"],
        doc="Balance transactions page 50 rows by default (the audit events' default), not 100.")
def btx_limit_default_50(ref: Reference) -> None:
    _default_size(ref, BTX, "50")


@mutant("audit-limit-default-100", reqs=["LIMIT-AUDIT-DEFAULT"],
        doc="Audit events page 100 rows by default (the ledger lists' default), not 50.")
def audit_limit_default_100(ref: Reference) -> None:
    _default_size(ref, AUDIT, "100")


@mutant("audit-apikey-filter-ignored", reqs=["AUDIT-APIKEY-FILTER"],
        doc="The `apiKey` filter of audit events is ignored: an unknown prefix lists every row.")
def audit_apikey_filter_ignored(ref: Reference) -> None:
    _drop_params(ref, AUDIT, ("apiKey",))


@mutant("audit-malformed-instant-ignored", reqs=["AUDIT-INVALID-QUERY"],
        doc="Audit events ignore a `createdAfter`/`createdBefore` that is not an instant with a timezone.")
def audit_malformed_instant_ignored(ref: Reference) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            names = {e.get("field") for e in err.errors or []}
            if not names & {"createdAfter", "createdBefore"}:
                raise
            return original(with_query(call, createdAfter=None, createdBefore=None))


@mutant("balance-sandbox-wallet-filled", reqs=["BAL-SANDBOX-SHAPE"],
        doc="The sandbox balance lists a USDC wallet figure instead of an empty `wallet`.")
def balance_sandbox_wallet_filled(ref: Reference) -> None:
    rewrite_balance(ref, lambda body: body.update(wallet=[{"chain": "ethereum", "currency": "USDC",
                                                           "amount": "0.00"}]))


@mutant("balance-cached-forever", reqs=["BAL-CACHE", "BAL-CACHE-LIMIT"],
        doc="GET /balance answers the first figure it read for an organization forever, not at most a minute.")
def balance_cached_forever(ref: Reference) -> None:
    cache: dict[tuple[str, str], Reply] = {}

    @around(ref, "getBalance")
    def get_balance(original: Handler, call: Call) -> Reply:
        return cache.setdefault((call.org_id, call.mode), original(call))


@mutant("btx-type-filter-ignored", reqs=["BTX-TYPE-FILTER"],
        doc="Balance transactions ignore `type`, unknown values included.")
def btx_type_filter_ignored(ref: Reference) -> None:
    _drop_params(ref, BTX, ("type",))


@mutant("btx-currency-filter-ignored", reqs=["BTX-FILTERS"], doc="Balance transactions ignore `currency` and `orderId`.")
def btx_currency_filter_ignored(ref: Reference) -> None:
    _drop_params(ref, BTX, ("currency", "orderId"))


@mutant("btx-created-range-exclusive", reqs=["BTX-CREATED-RANGE"],
        doc="`createdAfter`/`createdBefore` exclude a row created exactly at the bound.")
def btx_created_range_exclusive(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        changes: dict[str, str] = {}
        for name, step in (("createdAfter", 1), ("createdBefore", -1)):
            instant = parse_instant(call.query_params.get(name) or "")
            if instant is not None:
                changes[name] = iso(instant + timedelta(milliseconds=step))
        return original(with_query(call, **changes))


@mutant("btx-repeated-param-accepted", reqs=["BTX-INVALID-QUERY"],
        doc="A parameter sent twice to balance transactions is taken at its last value instead of refused.")
def btx_repeated_param_accepted(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        last = dict(call.query_params.multi_items())
        return original(dataclasses.replace(call, query_params=QueryParams(list(last.items()))))


@mutant("btx-type-filter-first-only", reqs=["BTX-TYPE-FILTER"],
        doc="A comma-separated `type` keeps the rows of its first type only.")
def btx_type_filter_first_only(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        kinds = call.query_params.get("type")
        return original(with_query(call, type=kinds.split(",")[0]) if kinds else call)


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


@mutant("history-malformed-since-ignored", reqs=["HIST-INVALID-QUERY"],
        doc="Balance history ignores a `since` that is not an instant with a timezone.")
def history_malformed_since_ignored(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        if call.query_params.get("since") is not None and parse_instant(call.query_params["since"]) is None:
            call = with_query(call, since=None)
        return original(call)


@mutant("history-reversal-missing", reqs=["HIST-REVERSAL"],
        doc="A failed or returned payout's money comes back without a `reversal` entry in the balance history.")
def history_reversal_missing(ref: Reference) -> None:
    rewrite_entries(ref, lambda body: body.update(entries=[e for e in body["entries"] if e["type"] != "reversal"]))


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


@mutant("untracked-movement-listed", reqs=["HIST-UNTRACKED-NETWORK"],
        doc="A movement on a network whose balance is not tracked is listed as a balance history entry.")
def untracked_movement_listed(ref: Reference) -> None:
    def movement(call: Call) -> list[dict[str, Any]]:
        if ledger.flag(ref.store, call.org_id, call.mode, ledger.UNTRACKED) is None:
            return []
        return [{"id": "untracked", "type": "funding", "status": "COMPLETED"}]

    _listed_too(ref, movement)


@mutant("hold-not-listed", reqs=["HIST-HOLD-IN-BTX"],
        doc="A hold lowers `available` but is not listed in the balance transactions.")
def hold_not_listed(ref: Reference) -> None:
    unlisted(ref, ledger.HOLD_TYPES)


@mutant("history-since-inclusive", reqs=["HIST-SINCE"],
        doc="Balance history `since=T` also lists the entries settled exactly at T.")
def history_since_inclusive(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        since = parse_instant(call.query_params.get("since") or "")
        return original(with_query(call, since=iso(since - timedelta(milliseconds=1))) if since else call)


@mutant("btx-unloaded-unavailable", reqs=["BTX-EMPTY-BEFORE-LOAD"],
        doc="Before historical rows are loaded, balance transactions answer 503 instead of an empty page.")
def btx_unloaded_unavailable(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        if ledger.flag(ref.store, call.org_id, call.mode, ledger.UNLOADED) is not None:
            raise ApiError("ORDERS_TEMPORARILY_UNAVAILABLE")
        return original(call)


@mutant("unavailable-source-still-summed", reqs=["BAL-UNAVAILABLE-FLOOR"],
        doc="With the provider unreadable, `balances` still adds its last known figure (not a floor).")
def unavailable_source_still_summed(ref: Reference) -> None:
    def summed(body: dict[str, Any]) -> None:
        if body["unavailable"]:
            body["balances"] = [{"currency": row["currency"], "amount": row["amount"]} for row in body["ledger"]]

    rewrite_balance(ref, summed)


@mutant("paging-bad-cursor-restarts", reqs=["HIST-INVALID-QUERY", "BTX-INVALID-QUERY", "AUDIT-INVALID-QUERY"],
        doc="A cursor not issued for this organization's list silently restarts the list at its first page.")
def paging_bad_cursor_restarts(ref: Reference) -> None:
    for op_id in lists(ref):
        @around(ref, op_id)
        def handler(original: Handler, call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if not any(e.get("field") == "cursor" for e in err.errors or []):
                    raise
                return original(with_query(call, cursor=None))


@mutant("balance-enveloped", reqs=["BAL-GET"],
        doc="GET /balance answers the Balance under a `data` envelope, as the lists do, not as the body itself.")
def balance_enveloped(ref: Reference) -> None:
    rewrite_replies(ref, "getBalance", lambda reply: dataclasses.replace(reply, body={"data": reply.body}))


@mutant("history-entries-as-data", reqs=["HIST-GET"],
        doc="Balance history answers its entries under `data`, as the other lists do, not `entries`.")
def history_entries_as_data(ref: Reference) -> None:
    rewrite_entries(ref, lambda body: body.update(data=body.pop("entries")))
