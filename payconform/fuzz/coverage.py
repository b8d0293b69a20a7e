"""The fuzz phase's coverage cases, built when a test runs instead of when pytest collects it.

Schemathesis builds each operation's coverage cases (boundaries, each constraint broken in turn, undocumented
methods) while pytest collects the test of that operation: about 5 s of CPU for the contract's operations, paid
by every xdist worker before the run's first test, though each operation's test runs on one worker only (an
embedded run's four workers spent some 40 s there, sending nothing). ``deferred()``, around the collection of
the fuzz suite, records what that build needs in place of doing it; ``attach(test)``, as the test starts, does
it: the same cases in the same order (they are attached after the contract's examples either way, and
Hypothesis reads them when the test is called), so the phase sends what it sent before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from schemathesis.generation.hypothesis import builder

PENDING = "_payconform_coverage_pending"  # the attribute of a collected test holding its deferred build


@contextmanager
def deferred() -> Iterator[None]:
    """While inside, schemathesis' test builder records each test's coverage build on the test (see ``attach``)."""
    build = builder.add_coverage

    def record(test: Callable, *args: Any, **kwargs: Any) -> Callable:
        setattr(test, PENDING, (build, args, kwargs))
        return test

    builder.add_coverage = record
    try:
        yield
    finally:
        builder.add_coverage = build


def attach(test: Any) -> None:
    """Build and attach the coverage cases ``deferred`` recorded on ``test`` (once; nothing if none)."""
    pending = getattr(test, PENDING, None)
    if pending is None:
        return
    delattr(test, PENDING)
    build, args, kwargs = pending
    build(test, *args, **kwargs)
