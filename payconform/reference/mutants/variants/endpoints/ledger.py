"""Tolerated variants of the Endpoints part for the ledger lists.

The whole suite must pass under each of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ....core.errors import ApiError
from ...patching import Handler
from ...registry import variant
from ...rewrites import data_rows, rewrite_refusals, rewrite_replies

if TYPE_CHECKING:
    from ....core.operation import Call, Reply
    from ....reference import Reference


def _null_when_withheld(reply: Reply) -> Reply:
    entries = reply.body.get("entries") if isinstance(reply.body, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        entry.setdefault("balanceAfter", None)
    return reply


def _available_in_provider(reply: Reply) -> Reply:
    body = reply.body if isinstance(reply.body, dict) else {}
    available = {row["currency"]: row["amount"] for row in body.pop("available", None) or []}
    for row in body.get("provider") or []:
        row["available"] = available.get(row["currency"], row["amount"])
    return reply


def _default_non_integer_limit(handler: Handler) -> Handler:
    def defaulted(call: Call) -> Reply:
        items = call.query_params.multi_items()
        if any(k == "limit" and not v.strip().lstrip("+-").isdigit() for k, v in items):
            call.query_params = call.query_params.__class__([(k, v) for k, v in items if k != "limit"])
        return handler(call)
    return defaulted


def _renamed(field: str, name: str) -> Callable[[Reply], Reply]:
    """A transform giving the answer's rows their `field` under `name` instead."""
    def rename(reply: Reply) -> Reply:
        for row in data_rows(reply):
            if field in row:
                row[name] = row.pop(field)
        return reply
    return rename


def _created_to_the_second(reply: Reply) -> Reply:
    for row in data_rows(reply):
        if isinstance(row.get("createdAt"), str):
            row["createdAt"] = row["createdAt"][:19] + "Z"  # the stored instant, to the whole second
    return reply


@variant("balance-after-null",
         doc="A withheld `balanceAfter` is written as null rather than left out: '`balanceAfter` is then withheld "
             "under a `note`' does not say how.")
def balance_after_null(ref: Reference) -> None:
    rewrite_replies(ref, "getBalanceHistory", _null_when_withheld)


@variant("provider-with-available",
         doc="The provider source holds an `available` figure beside its amount (`provider: [{currency, amount, "
             "available}]`), with no top-level `available`: 'Internal structure of each: not shown', and the spec "
             "names '`available` on the balance' without saying where.")
def provider_with_available(ref: Reference) -> None:
    rewrite_replies(ref, "getBalance", _available_in_provider)


@variant("limit-non-integer-defaulted",
         doc="A `limit` that is not an integer (`limit=abc`) on balance history and audit events is ignored and the "
             "default page size applies, rather than 400: the routes give only range rules ('`limit` (1-500, "
             "default 100, out-of-range clamped)', '`limit` (1-100, default 50)'), nothing of non-numeric values.")
def limit_non_integer_defaulted(ref: Reference) -> None:
    for op_id in ("getBalanceHistory", "listAuditEvents"):
        ref.wrap_handler(op_id, _default_non_integer_limit)


@variant("audit-bad-request",
         doc="The audit route refuses a foreign cursor or a malformed instant with 400 BAD_REQUEST, the cause in "
             "`detail` and no `errors`: its row says only '400 for a foreign cursor or malformed instant'.")
def audit_bad_request(ref: Reference) -> None:
    def bad_request(call: Call, err: ApiError) -> ApiError | None:
        if err.type != "VALIDATION_ERROR":
            return None
        causes = "; ".join(f"{e.get('field')}: {e.get('reason')}" for e in err.errors or [])
        return ApiError("BAD_REQUEST", f"{err.detail} ({causes})")

    rewrite_refusals(ref, "listAuditEvents", bad_request)


@variant("btx-amount-renamed",
         doc="Balance transaction rows carry their amount as `grossAmount`, not `amount`: the fields named are "
             "'`id` ..., `balanceAfter`, `net` ..., `type`, `orderId`, currency'; the remaining fields are not shown.")
def btx_amount_renamed(ref: Reference) -> None:
    rewrite_replies(ref, "listBalanceTransactions", _renamed("amount", "grossAmount"))


@variant("transactions-currency-code",
         doc="Balance transaction rows name their currency `currencyCode` (no `currency` field); the filter stays "
             "the query parameter `currency`: the row's fields are named '`id` ..., `balanceAfter`, `net` ..., "
             "`type`, `orderId`, currency', the currency without a field name, while the route's query names "
             "'`orderId`, `currency`'.")
def transactions_currency_code(ref: Reference) -> None:
    rewrite_replies(ref, "listBalanceTransactions", _renamed("currency", "currencyCode"))


@variant("ledger-times-to-the-second",
         doc="Balance transaction and audit event rows show `createdAt` to the whole second (truncated) while "
             "`createdAfter`/`createdBefore` filter on the instant as stored, to the millisecond: 'Remaining fields "
             "of this row and of an audit event row (other than those named in this document): not shown' (the "
             "audit row names only a 'creation time'), and the filters are only '`createdAfter`, `createdBefore` "
             "(inclusive, ISO 8601 with timezone)'.")
def ledger_times_to_the_second(ref: Reference) -> None:
    for op_id in ("listBalanceTransactions", "listAuditEvents"):
        rewrite_replies(ref, op_id, _created_to_the_second)


@variant("failed-payout-return-typed-reversal",
         doc="The money of a payout that failed with its funds returned comes back as a balance transaction of type "
             "`payout_reversal`; a bank return stays `payout_return`: 'Types seen: `payout`, `payout_return`; the "
             "full list of `type` values is not shown.'")
def failed_payout_return_typed_reversal(ref: Reference) -> None:
    def never_completed(call: Call, order_id: object) -> bool:
        row = call.ref.store.one("SELECT completed_at FROM payouts WHERE id = ?", (order_id,))
        return row is not None and row["completed_at"] is None

    def wrap(handler: Handler) -> Handler:
        def typed(call: Call) -> Reply:
            reply = handler(call)
            for row in data_rows(reply):
                if row.get("type") == "payout_return" and never_completed(call, row.get("orderId")):
                    row["type"] = "payout_reversal"
            return reply
        return typed

    ref.wrap_handler("listBalanceTransactions", wrap)
