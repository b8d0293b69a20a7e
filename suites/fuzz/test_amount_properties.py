"""Property: a zero or negative amount is refused with a 400 (a product's price may be zero).

Errors, BAD_REQUEST: "Non-field 400 (expired quote, above corridor maximum, non-positive amount, ...)". The
amounts are the request fields the contract declares as decimal strings; the requests are the profile's
example bodies of the fuzzed operations that need nothing but a unique name (creating a product, topping up
the sandbox), with the amount replaced by zero or a negative value in whole cents. A refusal typed
VALIDATION_ERROR is tolerated: a field check that catches the sign first still refuses the request. A product
priced zero may be taken or refused (``rules.MAY_BE_ZERO``: no price limits are shown and BAD_REQUEST's list of
causes is examples); a negative price is refused. Where the operation is the profile's (``fundSandbox``, whose
path and body are not shown), the failure names the profile entry.
The stateless fuzz checks the same rule on every generated request (``checks.py``); this test makes sure
the rule is exercised on every run, whatever the generator draws.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from payconform.suite import (
    FUZZ_DOCUMENTS,
    Api,
    Contract,
    expect_error,
    expect_status,
    fill,
    fuzz_session,
    refused_amount,
    run_contract,
)

from .._support.profile import success

SESSION = fuzz_session()
UNIQUE = "{unique}"


def _sendable(body: Any) -> bool:
    """Whether a profile example body has no placeholder other than {unique}."""
    if isinstance(body, dict):
        return all(_sendable(v) for v in body.values())
    return not (isinstance(body, str) and "{" in body and body != UNIQUE)


def _cases() -> list:
    contract = run_contract()
    ops = contract.profile.get("operations") or {}
    return [pytest.param(op_id, name, id=f"{op_id}.{name}")
            for doc in FUZZ_DOCUMENTS for op_id in SESSION.operations(doc)
            for name in sorted(SESSION.amount_fields(op_id))
            if isinstance((ops.get(op_id) or {}).get("body"), dict) and _sendable(ops[op_id]["body"])
            and str(ops[op_id].get("method", "")).upper() == "POST"]


non_positive = st.integers(min_value=-(10**17) + 1, max_value=0).map(
    lambda cents: "0" if cents == 0 else f"-{-cents // 100}.{-cents % 100:02d}")


@pytest.mark.req("ERR-BAD-REQUEST")
@pytest.mark.parametrize(("op_id", "field"), _cases())
@SESSION.settings.hypothesis_settings()
@given(amount=non_positive)
@example(amount="0")
@example(amount="0.00")
@example(amount="-0.01")
@example(amount="-150.00")
def test_non_positive_amount_is_refused(api: Api, contract: Contract, unique: Callable[[str], str],
                                        op_id: str, field: str, amount: str) -> None:
    """The operation's example body with ``field`` set to ``amount`` (zero or negative) is answered 400; a zero
    where it is a legal amount, 400 or the operation's success."""
    SESSION.spend()  # each example is a request of the fuzz phase's budget
    operation = contract.operation(op_id)
    body = {**fill(operation["body"], {"unique": unique("fz")}), field: amount}
    ex = api.op(op_id, json=body)
    what = f"{op_id} with {field}={amount!r}" + (f" (profile entry `operations.{op_id}`: {operation.get('why')})"
                                                 if operation.get("source") == "profile" else "")
    if refused_amount(op_id, field, amount) or ex.status >= 300:
        expect_error(ex, 400, {"BAD_REQUEST", "VALIDATION_ERROR"}, what)
    else:
        expect_status(ex, success(contract, op_id), f"{what}: a zero price taken (accepted: taken, or refused 400)")
