"""A test that runs out of time says what it was waiting for (``payconform.waits``).

pytest-timeout fails the test with "Timeout (>120.0s) from pytest-timeout."; before the report is made, the
waits in progress are added to that failure's message, so the terminal, JUnit and results.json all show
"... while waiting for a payout.created delivery; within it, for the answer to GET /orders/x".
"""

from __future__ import annotations

import pytest

from .. import waits
from ..results import records


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> None:
    """Before the report is made from ``call``: a timeout's failure gains the waits it cut short."""
    exc = call.excinfo.value if call.excinfo is not None else None
    record = records.current()
    noted = record.waits if record is not None else []
    if exc is not None and noted and waits.is_timeout(exc):
        exc.msg = f"{exc.msg.rstrip('.')}, {waits.describe(list(noted))}"
        noted.clear()
