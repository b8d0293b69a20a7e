"""Mutants of the Endpoints part for the list of a checkout link's payments (GET /links/{linkId}/payments): its
order, its cursor and its `limit`.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.datastructures import QueryParams

from ...core.errors import field_error
from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant

if TYPE_CHECKING:
    from ...reference import Reference


def _with_query(call: Call, **values: str | None) -> None:
    """The call's query with `values` set (a None value drops that parameter)."""
    params = dict(call.query_params)
    params.update(values)
    call.query_params = QueryParams({k: v for k, v in params.items() if v is not None})


def _limit_above_100_becomes(ref: Reference, value: str) -> None:
    """GET /links/{linkId}/payments takes a `limit` above 100 as ``value`` instead of 100."""
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit") or ""
        if raw.isdigit() and int(raw) > 100:
            _with_query(call, limit=value)
        return original(call)


@mutant("payments-oldest-first", reqs=["PAY-LIST"], doc="GET /links/{linkId}/payments lists each page oldest first.")
def payments_oldest_first(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        reply = original(call)
        reply.body["data"].reverse()
        return reply


@mutant("payments-list-lags-status", reqs=["PAY-LIST-AUTHORITATIVE"],
        doc="GET /links/{linkId}/payments lists a paid payment as `pending`, behind what the simulate call reported.")
def payments_list_lags_status(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            if row.get("status") == "paid":
                row["status"] = "pending"
        return reply


@mutant("payments-limit-zero-refused", reqs=["LIMIT-PAY-INVALID-DEFAULT"],
        doc="`limit=0` on GET /links/{linkId}/payments is a 400 instead of becoming 20.")
def payments_limit_zero_refused(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        if call.query_params.get("limit") == "0":
            raise field_error("limit", "must be between 1 and 100")
        return original(call)


@mutant("payments-default-limit-10", reqs=["LIMIT-PAY-DEFAULT"],
        doc="GET /links/{linkId}/payments without `limit` answers pages of 10 instead of 20.")
def payments_default_limit_10(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        if "limit" not in call.query_params:
            _with_query(call, limit="10")
        return original(call)


@mutant("payments-limit-above-100-becomes-20", reqs=["LIMIT-PAY-CLAMP-HIGH"],
        doc="A `limit` above 100 on GET /links/{linkId}/payments becomes 20 instead of 100.")
def payments_limit_above_100_becomes_20(ref: Reference) -> None:
    _limit_above_100_becomes(ref, "20")


@mutant("payments-limit-above-100-becomes-50", reqs=["LIMIT-PAY-CLAMP-HIGH"],
        doc="A `limit` above 100 on GET /links/{linkId}/payments becomes 50 instead of 100.")
def payments_limit_above_100_becomes_50(ref: Reference) -> None:
    _limit_above_100_becomes(ref, "50")


@mutant("payments-cursor-ignored", reqs=["PAY-LIST"],
        doc="GET /links/{linkId}/payments ignores `cursor`: the page after a `nextCursor` is the first page again.")
def payments_cursor_ignored(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        _with_query(call, cursor=None)
        return original(call)


@mutant("payments-limit-100-becomes-20", reqs=["LIMIT-PAY-DEFAULT"],
        doc="`limit=100` on GET /links/{linkId}/payments becomes 20, as if the range 1-100 ended at 99.")
def payments_limit_100_becomes_20(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        if call.query_params.get("limit") == "100":
            _with_query(call, limit="20")
        return original(call)


@mutant("payments-limit-non-numeric-refused", reqs=["LIMIT-PAY-INVALID-DEFAULT"],
        doc="A non-numeric `limit` (`abc`) on GET /links/{linkId}/payments is a 400 instead of becoming 20.")
def payments_limit_non_numeric_refused(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit")
        if raw is not None and not raw.lstrip("-").isdigit():
            raise field_error("limit", "must be an integer")
        return original(call)


@mutant("payments-limit-below-1-becomes-1", reqs=["LIMIT-PAY-INVALID-DEFAULT"],
        doc="A zero or negative `limit` on GET /links/{linkId}/payments is clamped up to 1 instead of becoming 20.")
def payments_limit_below_1_becomes_1(ref: Reference) -> None:
    @around(ref, "listCheckoutPayments")
    def list_checkout_payments(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit") or ""
        if raw.lstrip("-").isdigit() and int(raw) <= 0:
            _with_query(call, limit="1")
        return original(call)
