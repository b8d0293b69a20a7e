"""What the running test is waiting for: told when its timeout ends it, instead of only "Timeout (>120.0s)".

A helper that waits (for a delivery, a state, an answer) says so with ``waiting_for``; the note lives on the
test's record (``payconform.results.records.TestRecord.waits``), and the plugin (``payconform.plugin.waits``)
adds the waits in progress to the failure pytest-timeout raises. A wait left by that failure stays noted, so
the failure can name it; a wait that ends any other way is forgotten. Outside a test nothing is noted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from .results import records

TIMEOUT_PREFIX = "Timeout (>"  # how pytest-timeout's failure begins ("Timeout (>120.0s) from pytest-timeout.")


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is pytest-timeout's failure of a test that ran out of time."""
    return isinstance(exc, pytest.fail.Exception) and str(exc.msg).startswith(TIMEOUT_PREFIX)


@contextmanager
def waiting_for(what: str) -> Iterator[None]:
    """Note that the running test waits for ``what`` ("a payout.created delivery", "the answer to GET /x")
    while the block runs."""
    record = records.current()
    if record is None:
        yield
        return
    entry = record.wait(str(what))
    try:
        yield
    except BaseException as exc:
        if not is_timeout(exc):
            record.waited(entry)
        raise
    record.waited(entry)


def describe(waits: list[str]) -> str:
    """The note a timed-out test's failure gains: what it was waiting for, the innermost wait last."""
    return "while waiting for " + "; within it, for ".join(waits)
