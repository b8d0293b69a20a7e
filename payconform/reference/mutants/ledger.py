"""Mutants of Balance and ledger: `limit` per list route, the audit trail, the balance, balance transactions
and balance history.

Each wraps one operation's handler (or the audit log) on this server instance only.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams

from .. import ledger
from ..clock import iso, parse_instant
from ..errors import ApiError, field_error
from ..ledger import HISTORY_MAX_ORDERS, order_count
from ..lifecycle import PROCESSING, Step
from ..operation import Call, Reply
from . import mutant
from .paging import _with_query
from .recipients import Handler, around

if TYPE_CHECKING:
    from ..reference import Reference

HISTORY, BTX, AUDIT = "getBalanceHistory", "listBalanceTransactions", "listAuditEvents"


def _limit(call: Call) -> int | None:
    raw = call.query_params.get("limit")
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


# ---------------------------------------------------------------- limit


@mutant("history-limit-refused-out-of-range", reqs=["LIMIT-HIST-CLAMP"],
        doc="Balance history answers 400 for a `limit` outside 1-500 instead of clamping it.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        limit = _limit(call)
        if limit is not None and not 1 <= limit <= 500:
            raise field_error("limit", "must be between 1 and 500")
        return original(call)


@mutant("btx-limit-clamped", reqs=["LIMIT-BTX-REFUSE"],
        doc="Balance transactions clamp an out-of-range `limit` into 1-100 instead of answering 400.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        limit = _limit(call)
        if limit is not None and not 1 <= limit <= 100:
            call = _with_query(call, limit=str(max(1, min(100, limit))))
        return original(call)


@mutant("ledger-limit-non-integer-500", reqs=["LIMIT-LIST-ROUTES"],
        doc="Balance history, balance transactions and audit events crash (500 INTERNAL) on a `limit` that is not one"
            " plain integer: text, a decimal, empty, or given twice.")
def _(ref: Reference) -> None:
    for op_id in (HISTORY, BTX, AUDIT):
        @around(ref, op_id)
        def _(original: Handler, call: Call) -> Reply:
            values = call.query_params.getlist("limit")
            if values and (len(values) > 1 or not values[0].lstrip("-").isdigit()):
                raise ValueError(f"limit {values!r} is not an integer")
            return original(call)


@mutant("audit-limit-overflow-500", reqs=["LIMIT-LIST-ROUTES"],
        doc="Audit events crash (500 INTERNAL) on a `limit` beyond 32 bits instead of following the route's rule.")
def _(ref: Reference) -> None:
    @around(ref, AUDIT)
    def _(original: Handler, call: Call) -> Reply:
        limit = _limit(call)
        if limit is not None and abs(limit) >= 2**31:
            raise OverflowError("limit does not fit a 32-bit integer")
        return original(call)


def _default_size(ref: Reference, op_id: str, size: str = "20") -> None:
    @around(ref, op_id)
    def _(original: Handler, call: Call) -> Reply:
        if call.query_params.get("limit") is None:
            call = _with_query(call, limit=size)
        return original(call)


@mutant("history-limit-default-20", reqs=["LIMIT-HIST-DEFAULT"], doc="Balance history pages 20 rows by default.")
def _(ref: Reference) -> None:
    _default_size(ref, HISTORY)


@mutant("btx-limit-default-20", reqs=["LIMIT-BTX-DEFAULT"], doc="Balance transactions page 20 rows by default.")
def _(ref: Reference) -> None:
    _default_size(ref, BTX)


@mutant("audit-limit-default-20", reqs=["LIMIT-AUDIT-DEFAULT"], doc="Audit events page 20 rows by default.")
def _(ref: Reference) -> None:
    _default_size(ref, AUDIT)


@mutant("history-limit-default-50", reqs=["LIMIT-HIST-DEFAULT"],
        doc="Balance history pages 50 rows by default (the audit events' default), not 100.")
def _(ref: Reference) -> None:
    _default_size(ref, HISTORY, "50")


@mutant("btx-limit-default-50", reqs=["LIMIT-BTX-DEFAULT"],
        doc="Balance transactions page 50 rows by default (the audit events' default), not 100.")
def _(ref: Reference) -> None:
    _default_size(ref, BTX, "50")


@mutant("audit-limit-default-100", reqs=["LIMIT-AUDIT-DEFAULT"],
        doc="Audit events page 100 rows by default (the ledger lists' default), not 50.")
def _(ref: Reference) -> None:
    _default_size(ref, AUDIT, "100")


@mutant("limit-one-too-many", reqs=["LIMIT-LIST-ROUTES"],
        doc="History, balance transactions and audit events return one row more than the `limit` asked for.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY, BTX, AUDIT)
    def _(original: Handler, call: Call) -> Reply:
        limit = _limit(call)
        return original(_with_query(call, limit=str(limit + 1)) if limit is not None and 1 <= limit < 100 else call)





# ---------------------------------------------------------------- audit trail


def _drop_params(ref: Reference, op_id: str, names: tuple[str, ...]) -> None:
    @around(ref, op_id)
    def _(original: Handler, call: Call) -> Reply:
        return original(_with_query(call, **dict.fromkeys(names)))


@mutant("audit-row-twice", reqs=["AUDIT-ROW-PER-MUTATION"], doc="Every audited mutation writes two rows.")
def _(ref: Reference) -> None:
    record = ref.audit.record

    def twice(**row: Any) -> None:
        record(**row)
        record(**row)

    ref.audit.record = twice  # type: ignore[method-assign]


@mutant("audit-refused-not-recorded", reqs=["AUDIT-REFUSED-RECORDED"],
        doc="A refused mutation leaves no audit row; only successes are recorded.")
def _(ref: Reference) -> None:
    record = ref.audit.record

    def successes_only(**row: Any) -> None:
        if row.get("outcome") != "refused":
            record(**row)

    ref.audit.record = successes_only  # type: ignore[method-assign]


def _rewrite_audit_rows(ref: Reference, change: Any) -> None:
    @around(ref, AUDIT)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            change(row)
        return reply


@mutant("audit-row-without-request-id", reqs=["AUDIT-FIELDS"], doc="Audit rows leave out `requestId`.")
def _(ref: Reference) -> None:
    _rewrite_audit_rows(ref, lambda row: row.pop("requestId", None))


@mutant("audit-both-actors", reqs=["AUDIT-ACTOR-EXACTLY-ONE"],
        doc="API-key audit rows also carry an `actorUserId`, so both actor fields are set.")
def _(ref: Reference) -> None:
    _rewrite_audit_rows(ref, lambda row: row.update(actorUserId=row.get("actorUserId") or "user-1"))


@mutant("audit-apikey-filter-ignored", reqs=["AUDIT-APIKEY-FILTER"],
        doc="The `apiKey` filter of audit events is ignored: an unknown prefix lists every row.")
def _(ref: Reference) -> None:
    _drop_params(ref, AUDIT, ("apiKey",))


@mutant("audit-filters-ignored", reqs=["AUDIT-FILTERS"],
        doc="Audit events ignore `action`, `resourceId`, `actorUserId`, `createdAfter` and `createdBefore`.")
def _(ref: Reference) -> None:
    _drop_params(ref, AUDIT, ("action", "resourceId", "actorUserId", "createdAfter", "createdBefore"))


@mutant("audit-malformed-instant-ignored", reqs=["AUDIT-INVALID-QUERY"],
        doc="Audit events ignore a `createdAfter`/`createdBefore` that is not an instant with a timezone.")
def _(ref: Reference) -> None:
    @around(ref, AUDIT)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            names = {e.get("field") for e in err.errors or []}
            if not names & {"createdAfter", "createdBefore"}:
                raise
            return original(_with_query(call, createdAfter=None, createdBefore=None))


# ---------------------------------------------------------------- balance


def _rewrite_balance(ref: Reference, change: Any) -> None:
    @around(ref, "getBalance")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        change(reply.body)
        return reply


@mutant("balance-without-unavailable", reqs=["BAL-FIELDS"], doc="GET /balance leaves out `unavailable`.")
def _(ref: Reference) -> None:
    _rewrite_balance(ref, lambda body: body.pop("unavailable", None))


@mutant("balance-sandbox-wallet-filled", reqs=["BAL-SANDBOX-SHAPE"],
        doc="The sandbox balance lists a USDC wallet figure instead of an empty `wallet`.")
def _(ref: Reference) -> None:
    _rewrite_balance(ref, lambda body: body.update(wallet=[{"chain": "ethereum", "currency": "USDC",
                                                           "amount": "0.00"}]))


@mutant("balance-ledger-summed", reqs=["BAL-LEDGER-NOT-SUMMED"],
        doc="`balances` adds the `ledger` figure to the provider figure.")
def _(ref: Reference) -> None:
    def summed(body: dict[str, Any]) -> None:
        amount = Decimal(body["provider"][0]["amount"]) + Decimal(body["ledger"][0]["amount"])
        body["balances"] = [{"currency": body["provider"][0]["currency"], "amount": f"{amount:.2f}"}]

    _rewrite_balance(ref, summed)


@mutant("balance-cached-forever", reqs=["BAL-CACHE", "BAL-CACHE-LIMIT"],
        doc="GET /balance answers the first figure it read for an organization forever, not at most a minute.")
def _(ref: Reference) -> None:
    cache: dict[tuple[str, str], Reply] = {}

    @around(ref, "getBalance")
    def _(original: Handler, call: Call) -> Reply:
        return cache.setdefault((call.org_id, call.mode), original(call))


# ---------------------------------------------------------------- balance transactions


@mutant("btx-id-prefixed", reqs=["BTX-ID-NUMERIC"], doc="Balance transaction ids read `btx_<n>`, not numeric-looking.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            row["id"] = "btx_" + row["id"]
        return reply


@mutant("btx-cursor-inclusive", reqs=["BTX-CURSOR-OLDER"],
        doc="`cursor=<id>` lists the row with that id too, not only strictly older rows.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        cursor = call.query_params.get("cursor")
        return original(_with_query(call, cursor=str(int(cursor) + 1)) if cursor and cursor.isdigit() else call)


@mutant("btx-type-filter-ignored", reqs=["BTX-TYPE-FILTER"],
        doc="Balance transactions ignore `type`, unknown values included.")
def _(ref: Reference) -> None:
    _drop_params(ref, BTX, ("type",))


@mutant("btx-currency-filter-ignored", reqs=["BTX-FILTERS"], doc="Balance transactions ignore `currency` and `orderId`.")
def _(ref: Reference) -> None:
    _drop_params(ref, BTX, ("currency", "orderId"))


@mutant("btx-created-range-exclusive", reqs=["BTX-CREATED-RANGE"],
        doc="`createdAfter`/`createdBefore` exclude a row created exactly at the bound.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        changes: dict[str, str] = {}
        for name, step in (("createdAfter", 1), ("createdBefore", -1)):
            instant = parse_instant(call.query_params.get(name) or "")
            if instant is not None:
                changes[name] = iso(instant + timedelta(milliseconds=step))
        return original(_with_query(call, **changes))


@mutant("btx-repeated-param-accepted", reqs=["BTX-INVALID-QUERY"],
        doc="A parameter sent twice to balance transactions is taken at its last value instead of refused.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        last = dict(call.query_params.multi_items())
        return original(dataclasses.replace(call, query_params=QueryParams(list(last.items()))))


@mutant("btx-net-missing", reqs=["BTX-NET"], doc="Balance transaction rows leave out `net` although the fee is known.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            row.pop("net", None)
        return reply


@mutant("btx-net-unsigned", reqs=["BTX-NET"], doc="`net` is written without its sign: an outgoing row's `net` is positive.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            if row.get("net") is not None:
                row["net"] = f"{abs(Decimal(row['net'])):.2f}"
        return reply


@mutant("btx-type-filter-first-only", reqs=["BTX-TYPE-FILTER"],
        doc="A comma-separated `type` keeps the rows of its first type only.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        kinds = call.query_params.get("type")
        return original(_with_query(call, type=kinds.split(",")[0]) if kinds else call)


# ---------------------------------------------------------------- balance history


def _rewrite_entries(ref: Reference, change: Any) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        change(reply.body)
        return reply


@mutant("history-without-hasmore", reqs=["HIST-PAGE-FIELDS"], doc="Balance history pages leave out `hasMore`.")
def _(ref: Reference) -> None:
    _rewrite_entries(ref, lambda body: body.pop("hasMore", None))


@mutant("history-topup-pending", reqs=["HIST-ENTRY-SANDBOX-TOPUP"],
        doc="A sandbox top-up is listed in the balance history as `PENDING`, not `COMPLETED`.")
def _(ref: Reference) -> None:
    def pending(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            if entry["type"] == "funding":
                entry["status"] = "PENDING"

    _rewrite_entries(ref, pending)


@mutant("history-balance-after-stale", reqs=["HIST-BALANCE-AFTER-RECONCILES"],
        doc="`balanceAfter` is published one unit above the running total, so it does not reconcile.")
def _(ref: Reference) -> None:
    def stale(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            entry["balanceAfter"] = f"{Decimal(entry['balanceAfter']) + 1:.2f}"

    _rewrite_entries(ref, stale)


@mutant("history-balance-after-largest-last", reqs=["HIST-BALANCE-AFTER-RECONCILES"],
        doc="`balanceAfter` values are published in rising order, so after a debit the newest entry shows the largest "
            "running total, not the balance (the balance still among them).")
def _(ref: Reference) -> None:
    def rising(body: dict[str, Any]) -> None:
        shown = [e for e in body["entries"] if e.get("balanceAfter") is not None]
        for entry, value in zip(shown, sorted((e["balanceAfter"] for e in shown), key=Decimal)):
            entry["balanceAfter"] = value

    _rewrite_entries(ref, rising)


@mutant("history-since-overrides-cursor", reqs=["HIST-CURSOR-XOR-SINCE"],
        doc="Balance history takes `cursor` and `since` together, ignoring `since`, instead of a 400.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        return original(_with_query(call, since=None) if call.query_params.get("cursor") else call)


@mutant("history-malformed-since-ignored", reqs=["HIST-INVALID-QUERY"],
        doc="Balance history ignores a `since` that is not an instant with a timezone.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        if call.query_params.get("since") is not None and parse_instant(call.query_params["since"]) is None:
            call = _with_query(call, since=None)
        return original(call)


# ---------------------------------------------------------------- reconciliation after payouts


@mutant("history-reversal-missing", reqs=["HIST-REVERSAL"],
        doc="A failed or returned payout's money comes back without a `reversal` entry in the balance history.")
def _(ref: Reference) -> None:
    _rewrite_entries(ref, lambda body: body.update(entries=[e for e in body["entries"] if e["type"] != "reversal"]))


@mutant("history-payout-not-debited", reqs=["HIST-ENTRY-PAYOUT-DEBITED"],
        doc="A payout drawn from the balance is listed in the history as `COMPLETED` instead of `DEBITED`.")
def _(ref: Reference) -> None:
    def completed(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            if entry["type"] == "payout":
                entry["status"] = "COMPLETED"

    _rewrite_entries(ref, completed)


@mutant("btx-return-typed-refund", reqs=["BTX-TYPES-SEEN"],
        doc="A payout's money coming back is a balance transaction of type `refund`, not `payout_return`.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            if row["type"] == "payout_return":
                row["type"] = "refund"
        return reply


def _unlisted(ref: Reference, types: tuple[str, ...]) -> None:
    """Balance transactions leave out the rows of these types."""
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["data"] = [row for row in reply.body["data"] if row["type"] not in types]
        return reply


@mutant("btx-returns-not-listed", reqs=["BTX-COVERAGE"],
        doc="Balance transactions leave out the rows of payouts returned or failed with money coming back.")
def _(ref: Reference) -> None:
    _unlisted(ref, ("payout_return",))


@mutant("history-size-limit-off-by-one", reqs=["HIST-TOO-LARGE", "HIST-SIZE-LIMIT"],
        doc="Balance history answers 413 HISTORY_TOO_LARGE already at exactly 100,000 orders.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        if order_count(ref.store, call.org_id, call.mode) >= HISTORY_MAX_ORDERS:
            raise ApiError("HISTORY_TOO_LARGE")
        return original(call)


@mutant("history-size-unlimited", reqs=["HIST-TOO-LARGE", "ERR-HISTORY-TOO-LARGE"],
        doc="Balance history answers however many orders the organization holds, never 413.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "HISTORY_TOO_LARGE":
                raise
            return Reply(200, {"entries": [], "hasMore": False})


# ---------------------------------------------------------------- history rules, sources, retention, rate


def _listed_too(ref: Reference, extra: Any) -> None:
    """Balance history lists `extra(call)` entries besides its own."""
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["entries"] += extra(call)
        return reply


@mutant("history-pending-deposit-listed", reqs=["HIST-ENTRY-DEPOSIT"],
        doc="A deposit to the funding account is in the balance history while still pending.")
def _(ref: Reference) -> None:
    def pending(call: Call) -> list[dict[str, Any]]:
        rows = ref.store.all("SELECT * FROM deposits WHERE org_id = ? AND mode = ? AND status = 'pending'",
                             (call.org_id, call.mode))
        return [{"id": row["id"], "type": "funding", "status": "COMPLETED", "amount": row["amount"],
                 "currency": row["currency"]} for row in rows]

    _listed_too(ref, pending)


@mutant("compliance-rejection-reversed", reqs=["HIST-COMPLIANCE-STAYS-DEBITED"],
        doc="A payout rejected by compliance gets its money back (a `reversal`) instead of staying debited.")
def _(ref: Reference) -> None:
    ref.lifecycle.timelines["0005"] = (PROCESSING, Step(30, "payout.failed", "failed", "compliance_rejected", True))


@mutant("wallet-payout-debited", reqs=["HIST-WALLET-PAYOUT-NOTHING"],
        doc="A payout funded from the own wallet is also debited from the balance (a `payout` entry).")
def _(ref: Reference) -> None:
    @around(ref, "createPayout")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        if isinstance(reply.body, dict) and reply.body.get("requiresFunding"):
            ledger.post(call, type="payout", amount=-Decimal(reply.body["sourceAmount"]),
                        currency=reply.body["sourceCurrency"], order_id=reply.body["payoutId"])
        return reply


@mutant("untracked-movement-listed", reqs=["HIST-UNTRACKED-NETWORK"],
        doc="A movement on a network whose balance is not tracked is listed as a balance history entry.")
def _(ref: Reference) -> None:
    def movement(call: Call) -> list[dict[str, Any]]:
        if ledger.flag(ref.store, call.org_id, call.mode, ledger.UNTRACKED) is None:
            return []
        return [{"id": "untracked", "type": "funding", "status": "COMPLETED"}]

    _listed_too(ref, movement)


@mutant("history-note-missing", reqs=["HIST-NOTE"], doc="Balance history withholds `balanceAfter` without a `note`.")
def _(ref: Reference) -> None:
    _rewrite_entries(ref, lambda body: body.pop("note", None))


@mutant("hold-not-listed", reqs=["HIST-HOLD-IN-BTX"],
        doc="A hold lowers `available` but is not listed in the balance transactions.")
def _(ref: Reference) -> None:
    _unlisted(ref, ledger.HOLD_TYPES)


@mutant("history-since-inclusive", reqs=["HIST-SINCE"],
        doc="Balance history `since=T` also lists the entries settled exactly at T.")
def _(ref: Reference) -> None:
    @around(ref, HISTORY)
    def _(original: Handler, call: Call) -> Reply:
        since = parse_instant(call.query_params.get("since") or "")
        return original(_with_query(call, since=iso(since - timedelta(milliseconds=1))) if since else call)


@mutant("btx-rows-restated", reqs=["BTX-APPEND-ONLY"],
        doc="Listed balance transactions are restated: every row shows the latest `balanceAfter`.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        latest = ledger.balance(ref.store, call.org_id, call.mode, "USD")
        for row in reply.body["data"]:
            row["balanceAfter"] = f"{latest:.2f}"
        return reply


@mutant("btx-unloaded-unavailable", reqs=["BTX-EMPTY-BEFORE-LOAD"],
        doc="Before historical rows are loaded, balance transactions answer 503 instead of an empty page.")
def _(ref: Reference) -> None:
    @around(ref, BTX)
    def _(original: Handler, call: Call) -> Reply:
        if ledger.flag(ref.store, call.org_id, call.mode, ledger.UNLOADED) is not None:
            raise ApiError("ORDERS_TEMPORARILY_UNAVAILABLE")
        return original(call)


@mutant("audit-retention-one-year", reqs=["AUDIT-RETENTION", "AUDIT-RETENTION-LIMIT"],
        doc="Audit rows older than one year are no longer listed (retention is five years).")
def _(ref: Reference) -> None:
    @around(ref, AUDIT)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        cutoff = iso(call.now - timedelta(days=365))
        reply.body["data"] = [row for row in reply.body["data"] if row["createdAt"] >= cutoff]
        return reply


@mutant("wallet-priced", reqs=["BAL-WALLET-FACE-VALUE"],
        doc="Wallet stablecoins are listed at a market price (0.9990 per token), not at face value.")
def _(ref: Reference) -> None:
    def priced(body: dict[str, Any]) -> None:
        for row in body["wallet"]:
            row["amount"] = str(Decimal(row["amount"]) * Decimal("0.9990"))

    _rewrite_balance(ref, priced)


@mutant("unavailable-not-named", reqs=["BAL-UNAVAILABLE-NAMES-SOURCE"],
        doc="GET /balance leaves `unavailable` empty although a source could not be read.")
def _(ref: Reference) -> None:
    _rewrite_balance(ref, lambda body: body.update(unavailable=[]))


@mutant("unavailable-source-still-summed", reqs=["BAL-UNAVAILABLE-FLOOR"],
        doc="With the provider unreadable, `balances` still adds its last known figure (not a floor).")
def _(ref: Reference) -> None:
    def summed(body: dict[str, Any]) -> None:
        if body["unavailable"]:
            body["balances"] = [{"currency": row["currency"], "amount": row["amount"]} for row in body["ledger"]]

    _rewrite_balance(ref, summed)


@mutant("history-rate-default", reqs=["RATE-HISTORY"],
        doc="Balance history has no limit of its own: only the default 100 per minute applies.")
def _(ref: Reference) -> None:
    ref.ratelimit.per_operation_limits = {}
