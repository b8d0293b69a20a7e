"""Mutants that only fuzzing finds: the bug sits where example-based tests do not look (an unusual
character, a sign, a huge number, a rarely hit error path). Each is killed by a test of ``suites/fuzz``.

Each wraps one operation's handler (``around``, from the recipients mutants) on this server instance only.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from ..errors import ApiError
from ..operation import Call, Reply
from . import mutant
from .recipients import Handler, around, body

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("fuzz-recipient-name-non-ascii-500", reqs=["RCP-CREATE"],
        doc="createBeneficiary crashes (500 INTERNAL) on a `name` with a character outside ASCII.")
def _(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        name = body(call).get("name")
        if isinstance(name, str):
            name.encode("ascii")  # UnicodeEncodeError: the pipeline answers 500 INTERNAL
        return original(call)


@mutant("fuzz-negative-amount-accepted", reqs=["ERR-BAD-REQUEST"],
        doc="A negative amount (product `unitAmount`, sandbox funding `amount`, payout link `sourceAmount`) is "
            "accepted, its absolute value used, instead of 400 BAD_REQUEST.")
def _(ref: Reference) -> None:
    for op_id, field in (("createCheckoutProduct", "unitAmount"), ("updateCheckoutProduct", "unitAmount"),
                         ("fundSandbox", "amount"), ("createPayoutLink", "sourceAmount")):
        @around(ref, op_id)
        def _(original: Handler, call: Call, field: str = field) -> Reply:
            amount = body(call).get(field)
            if isinstance(amount, str) and amount.startswith("-"):
                body(call)[field] = amount[1:]
            return original(call)


@mutant("fuzz-validation-error-422", reqs=["ERR-VALIDATION-ERROR"],
        doc="A recipient PATCH with invalid fields answers 422 VALIDATION_ERROR (an undocumented status) instead of 400.")
def _(ref: Reference) -> None:
    @around(ref, "updateBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "VALIDATION_ERROR":
                raise ApiError(err.type, err.detail, status=422, errors=err.errors) from None
            raise


@mutant("fuzz-history-limit-overflow-500", reqs=["LIMIT-HIST-CLAMP"],
        doc="Balance history crashes (500 INTERNAL) on a `limit` beyond 32 bits instead of clamping it.")
def _(ref: Reference) -> None:
    @around(ref, "getBalanceHistory")
    def _(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit")
        if raw is not None and raw.lstrip("-").isdigit() and abs(int(raw)) >= 2**31:
            raise OverflowError("limit does not fit a 32-bit integer")
        return original(call)


@mutant("fuzz-btx-huge-limit-clamped", reqs=["LIMIT-BTX-REFUSE"],
        doc="Balance transactions clamp a `limit` above 1000 to 100 instead of refusing it (101-1000 still refused).")
def _(ref: Reference) -> None:
    @around(ref, "listBalanceTransactions")
    def _(original: Handler, call: Call) -> Reply:
        raw = call.query_params.get("limit")
        if raw is not None and raw.isdigit() and int(raw) > 1000:
            call.query_params = call.query_params.__class__(
                [(k, "100" if k == "limit" else v) for k, v in call.query_params.multi_items()])
        return original(call)


@mutant("fuzz-unit-amount-via-float", reqs=["PROD-CREATE"],
        doc="A product's `unitAmount` goes through a binary float, so large amounts come back changed in the cents.")
def _(ref: Reference) -> None:
    @around(ref, "createCheckoutProduct")
    def _(original: Handler, call: Call) -> Reply:
        amount = body(call).get("unitAmount")
        if isinstance(amount, str):
            try:
                body(call)["unitAmount"] = f"{Decimal(float(amount)):.2f}"
            except ValueError:
                pass
        return original(call)
