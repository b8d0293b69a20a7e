"""Tolerated variants of the balance and ledger reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ApiError
from . import variant
from .rewrites import rewrite_refusals, rewrite_replies

if TYPE_CHECKING:
    from ..operation import Call, Reply
    from ..reference import Handler, Reference


def _null_when_withheld(reply: Reply) -> Reply:
    entries = reply.body.get("entries") if isinstance(reply.body, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        entry.setdefault("balanceAfter", None)
    return reply


@variant("balance-after-null",
         doc="A withheld `balanceAfter` is written as null rather than left out: '`balanceAfter` is then withheld "
             "under a `note`' does not say how.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "getBalanceHistory", _null_when_withheld)


def _available_in_provider(reply: Reply) -> Reply:
    body = reply.body if isinstance(reply.body, dict) else {}
    available = {row["currency"]: row["amount"] for row in body.pop("available", None) or []}
    for row in body.get("provider") or []:
        row["available"] = available.get(row["currency"], row["amount"])
    return reply


@variant("provider-with-available",
         doc="The provider source holds an `available` figure beside its amount (`provider: [{currency, amount, "
             "available}]`), with no top-level `available`: 'Internal structure of each: not shown', and the spec "
             "names '`available` on the balance' without saying where.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "getBalance", _available_in_provider)


@variant("limit-non-integer-defaulted",
         doc="A `limit` that is not an integer (`limit=abc`) on balance history and audit events is ignored and the "
             "default page size applies, rather than 400: the routes give only range rules ('`limit` (1-500, "
             "default 100, out-of-range clamped)', '`limit` (1-100, default 50)'), nothing of non-numeric values.")
def _(ref: Reference) -> None:
    for op_id in ("getBalanceHistory", "listAuditEvents"):
        ref.wrap_handler(op_id, _default_non_integer_limit)


def _default_non_integer_limit(handler: Handler) -> Handler:
    def defaulted(call: Call) -> Reply:
        items = call.query_params.multi_items()
        if any(k == "limit" and not v.strip().lstrip("+-").isdigit() for k, v in items):
            call.query_params = call.query_params.__class__([(k, v) for k, v in items if k != "limit"])
        return handler(call)
    return defaulted


@variant("audit-bad-request",
         doc="The audit route refuses a foreign cursor or a malformed instant with 400 BAD_REQUEST, the cause in "
             "`detail` and no `errors`: its row says only '400 for a foreign cursor or malformed instant'.")
def _(ref: Reference) -> None:
    def bad_request(call: Call, err: ApiError) -> ApiError | None:
        if err.type != "VALIDATION_ERROR":
            return None
        causes = "; ".join(f"{e.get('field')}: {e.get('reason')}" for e in err.errors or [])
        return ApiError("BAD_REQUEST", f"{err.detail} ({causes})")

    rewrite_refusals(ref, "listAuditEvents", bad_request)


def _amount_renamed(reply: Reply) -> Reply:
    rows = reply.body.get("data") if isinstance(reply.body, dict) else None
    for row in rows if isinstance(rows, list) else []:
        if "amount" in row:
            row["grossAmount"] = row.pop("amount")
    return reply


@variant("btx-amount-renamed",
         doc="Balance transaction rows carry their amount as `grossAmount`, not `amount`: the fields named are "
             "'`id` ..., `balanceAfter`, `net` ..., `type`, `orderId`, currency'; the remaining fields are not shown.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "listBalanceTransactions", _amount_renamed)
