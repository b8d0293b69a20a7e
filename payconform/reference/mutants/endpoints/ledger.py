"""Mutants of the Endpoints part for balances, balance transactions, audit events and the queries of the
balance history (page size, a malformed `since`, a foreign cursor); its entries and rules are `history.py`'s.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from starlette.datastructures import QueryParams

from ...resources import ledger
from ...core.clock import iso, parse_instant
from ...core.errors import ApiError, field_error
from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant
from ..rewrites import rewrite_replies
from ..support.ledger import (
    AUDIT, BTX, HISTORY, bound_moved_back, limit_asked, lists, rewrite_balance, unlisted, with_query,
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


@mutant("btx-created-before-exclusive", reqs=["BTX-CREATED-RANGE"],
        doc="`createdBefore` excludes a row created exactly at the bound (a half-open range); `createdAfter` keeps it.")
def btx_created_before_exclusive(ref: Reference) -> None:
    bound_moved_back(ref, BTX, "createdBefore")


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


@mutant("history-malformed-since-ignored", reqs=["HIST-INVALID-QUERY"],
        doc="Balance history ignores a `since` that is not an instant with a timezone.")
def history_malformed_since_ignored(ref: Reference) -> None:
    @around(ref, HISTORY)
    def get_balance_history(original: Handler, call: Call) -> Reply:
        if call.query_params.get("since") is not None and parse_instant(call.query_params["since"]) is None:
            call = with_query(call, since=None)
        return original(call)


@mutant("hold-not-listed", reqs=["HIST-HOLD-IN-BTX"],
        doc="A hold lowers `available` but is not listed in the balance transactions.")
def hold_not_listed(ref: Reference) -> None:
    unlisted(ref, ledger.HOLD_TYPES)


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
