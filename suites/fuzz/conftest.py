"""The fuzz suite's wiring: a fuzz session per pytest process, its custom checks, per-operation requirements.

``pytest_configure`` is called for this conftest when it is loaded at collection (pytest replays the hook
for late conftests), after the payconform plugin has loaded the target - so the test modules, imported
next, can build their schemathesis schemas from the session at import time, which is what
``schema.parametrize()`` needs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from payconform.suite import (
    ContractViolation,
    ShareSpent,
    attach_fuzz_coverage,
    configure_fuzz,
    deferred_fuzz_coverage,
    fail,
    fuzz_item_operation,
    fuzz_session,
)

from . import checks, tolerant  # noqa: F401  (registers the custom checks with schemathesis)


@pytest.hookimpl(trylast=True)  # after the plugin's: when suites/fuzz is on the command line, both run in one call
def pytest_configure(config: pytest.Config) -> None:
    configure_fuzz(config)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Add the requirements fuzz.yaml ties to an operation (`operation_requirements`) to that operation's items,
    and a timeout that grows with the budget (a deep run outlasts the plugin's default per-test timeout); at
    ``--fuzz-budget 0`` the phase is off and its tests skip, saying so.

    Runs before the plugin's own hook, so that ``--select`` sees them.
    """
    current = fuzz_session()
    if current is None:
        return
    timeout = current.settings.timeout()
    for item in items:
        op_id = fuzz_item_operation(item)
        extra = current.settings.operation_requirements.get(op_id or "", [])
        if extra:
            item.add_marker(pytest.mark.req(*extra))
        if item.path.parent != Path(__file__).parent:
            continue
        if current.settings.examples == 0:
            item.add_marker(pytest.mark.skip(reason="fuzz phase off (--fuzz-budget 0)"))
        elif item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(timeout))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Split the phase's request budget over the tests of the phase this run selected (a sweep per operation, a
    walk per document, the property tests): ``--select`` of one operation gives it the whole budget. Every
    process collects the same items, so the shares add up to the budget whichever worker runs which test."""
    current = fuzz_session()
    if current is not None:
        phase = [item for item in session.items if item.path.parent == Path(__file__).parent]
        current.settings.split([item.nodeid for item in phase if item.get_closest_marker("sweep") is None],
                               [item.nodeid for item in phase if item.get_closest_marker("sweep") is not None])


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """Collect the fuzz tests without building their coverage cases: the worker that runs a test builds its
    cases as it starts (``fuzz_coverage``), instead of every worker building all of them before any test runs."""
    with deferred_fuzz_coverage():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Fail the test with the failure its fuzz run recorded (see ``FuzzSession.validate``), or because every
    case it sent was refused the key (401, 403 FORBIDDEN): a refused case reached no operation, so nothing of the
    test's requirements was checked, while the run's key is one the target should accept. A test that sent its
    share of the phase's budget (``ShareSpent``) ends there, judged on what it sent; one whose share its
    setup took (a property test's rows) is skipped, saying so."""
    checks.REACH.reset()
    attach_fuzz_coverage(getattr(item, "obj", None))
    current = fuzz_session()
    try:
        result = yield
    except ShareSpent as spent:
        result = None
        if current is not None and not current.started.get(item.nodeid):
            pytest.skip(f"the fuzz phase's budget left this test nothing to check: {spent}")
    except BaseExceptionGroup as group:  # Hypothesis gathers the explicit examples' failures, the share's end too
        _, failures = group.split(ShareSpent)
        if failures is None:
            result = None
        else:
            raise failures.exceptions[0] if len(failures.exceptions) == 1 else failures
    message = current.take_failure(item.nodeid) if current is not None else None
    if message:
        raise ContractViolation(message)
    unchecked = checks.REACH.unchecked()
    if unchecked:
        reqs = ", ".join(sorted({rid for m in item.iter_markers("req") for rid in m.args})) or "its requirements"
        fail(f"{unchecked}: nothing about {reqs} was checked",
             expected="the run's api key accepted, so that the fuzzed requests reach the operation")
    return result
