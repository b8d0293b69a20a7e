"""How a run ends early, and the tests it leaves: the target stopped answering, ``--max-duration``, an interrupt.

- The breaker (``payconform.transport.breaker``) lives in a directory the controller shares with its xdist workers;
  once it has tripped, each test left fails at setup with the cause, at once.
- ``--max-duration``: the controller fixes the deadline (wall clock) and hands it to the workers; a test
  that would start after it is reported "not run" (skipped with a ``not run:`` reason, verdict ``not_run``).
- ``-x`` / ``--maxfail`` under xdist: the controller that leads its own process group (``payconform run``
  starts it so) interrupts the group once the failures are reached, so the tests in flight stop at once
  instead of each worker finishing the tests it was sent; the run exits 1 (pytest's failures), not 2.
- The tests left: each collecting process writes its conformance tests (node id, requirement ids, needs) to
  the shared directory; at the end the controller gives every test without a result a "not run" row (an
  interrupted run: SIGINT, SIGTERM through ``payconform run``, or its hard stop), as does a test stopped
  while it ran (set up, never finished), so the report says what was not checked instead of leaving it out
  or calling it failed, and a run with tests not run never exits 0.
- How the run ended (``payconform.ended.How``) goes to results.json (``run.ended``, through ``ended``) and to
  JUnit (a testsuite property), so a partial report says it is one.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from _pytest.junitxml import xml_key

from ..ended import JUNIT_PROPERTY, OWN_GROUP_VAR, How
from ..transport import breaker as _breaker
from ..results.skips import NOT_RUN
from ..results.verdicts import Verdict
from .markers import active_for, needs, requirement_ids
from .recording import _clean_nodeid
from .session import get_state

WORKER_RUN_DIR = "payconform_run_dir"
WORKER_DEADLINE = "payconform_deadline"
_RUN_DIR = pytest.StashKey[str]()
_DEADLINE = pytest.StashKey["float | None"]()
_COLLECTED = pytest.StashKey[list]()
_ENDED = pytest.StashKey[dict]()


class _StopAtMaxfail:
    """xdist controller leading its own process group: interrupt the group once pytest's ``shouldfail`` is set
    (``-x``, ``--maxfail``); xdist alone lets every worker finish the tests already sent to it."""

    def __init__(self) -> None:
        self.session: pytest.Session | None = None
        self.stopping = False

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if session.config.pluginmanager.hasplugin("dsession"):  # xdist's controller (registered after configure)
            self.session = session

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.stopping or self.session is None or not self.session.shouldfail:
            return
        self.stopping = True
        print(f"payconform: {self.session.shouldfail} (-x, --maxfail): interrupting the tests in flight",
              file=sys.stderr)
        os.killpg(os.getpgrp(), signal.SIGINT)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = get_state(config)
    if state.target is None:
        return
    if state.is_worker:
        run_dir = config.workerinput.get(WORKER_RUN_DIR)
        deadline = config.workerinput.get(WORKER_DEADLINE)
    else:
        run_dir = state.tmpdir()
        seconds = config.getoption("payconform_max_duration")
        deadline = time.time() + seconds if seconds else None
    config.stash[_DEADLINE] = deadline
    if run_dir:
        config.stash[_RUN_DIR] = run_dir
        state.run.run_dir = Path(run_dir)
        state.run.breaker = _breaker.Breaker(run_dir)
    if (not state.is_worker and config.getoption("maxfail") and os.environ.get(OWN_GROUP_VAR)
            and os.getpgrp() == os.getpid()):
        config.pluginmanager.register(_StopAtMaxfail(), "payconform-stop-at-maxfail")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: the shared directory and the deadline go to each worker."""
    config = node.config
    if _RUN_DIR in config.stash:
        node.workerinput[WORKER_RUN_DIR] = config.stash[_RUN_DIR]
    node.workerinput[WORKER_DEADLINE] = config.stash.get(_DEADLINE, None)


def deadline_passed(config: pytest.Config) -> bool:
    deadline = config.stash.get(_DEADLINE, None)
    return deadline is not None and time.time() >= deadline


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test past the deadline is not run; once the target stopped answering, a test fails at once. After
    the skips for unmet needs (a test the target could never run says so), before any fixture is set up."""
    if not active_for(item):
        return
    if deadline_passed(item.config):
        pytest.skip(f"{NOT_RUN}: --max-duration reached before it started")
    breaker = get_state(item.config).run.breaker
    why = breaker.tripped() if breaker is not None else None
    if why is not None:
        pytest.fail(f"{_breaker.CAUSE}: {why}", pytrace=False)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember the selected conformance tests (workers: in the shared directory, for the controller), once
    every plugin has chosen them (``--select``, ``-k``, and ``--lf``, which deselects after the others)."""
    config = session.config
    run_dir = config.stash.get(_RUN_DIR, None)
    if run_dir is None:
        return
    rows = [{"nodeid": _clean_nodeid(i), "requirements": requirement_ids(i), "needs": needs(i)}
            for i in session.items if active_for(i)]
    if get_state(config).is_worker:
        path = Path(run_dir) / f"collected-{config.workerinput.get('workerid', 'gw')}.json"
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:
        config.stash[_COLLECTED] = rows


def _collected(config: pytest.Config) -> list[dict]:
    if _COLLECTED in config.stash:
        return config.stash[_COLLECTED]
    for path in sorted(Path(config.stash[_RUN_DIR]).glob("collected-*.json")):
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return []


def ended(config: pytest.Config) -> dict | None:
    """How the run ended (``how``, a ``payconform.ended.How`` value, and ``detail``, a sentence), once the
    controller's session finished; None for a process that gives no results."""
    return config.stash.get(_ENDED, None)


def _how(session: pytest.Session, exitstatus: int) -> tuple[How, str]:
    """What ended the run, and the reason each test it left is not run."""
    if deadline_passed(session.config):
        return How.MAX_DURATION, "--max-duration reached"
    if session.shouldfail:
        return How.MAXFAIL, f"{session.shouldfail} (-x, --maxfail)"
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return How.INTERRUPTED, "the run was interrupted"
    return How.COMPLETE, "the run ended before it"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    """Before the results are written: a "not run" row for each test that has none, and how the run ended."""
    state = get_state(session.config)
    if state.is_worker or _RUN_DIR not in session.config.stash or session.config.option.collectonly:
        return
    how, why = _how(session, exitstatus)
    reason = f"{NOT_RUN}: {why}"
    rows = state.collector.rows
    for row in list(rows.values()):
        if row["outcome"] is None:  # set up, never finished: stopped while it ran, no verdict to give
            state.collector.not_run(row["nodeid"], row["requirements"], row["needs"], f"{reason} while it ran")
    for test in _collected(session.config):
        if test["nodeid"] not in rows:
            state.collector.not_run(test["nodeid"], test["requirements"], test["needs"], reason)
    not_run = sum(1 for r in rows.values() if r["verdict"] == Verdict.NOT_RUN.value)
    if how in (How.MAX_DURATION, How.MAXFAIL) and not not_run:
        how = How.COMPLETE  # the deadline passed, or the failures were reached, as the last tests finished
    if how is not How.COMPLETE:
        detail = f"{why}: {not_run} tests not run"
    else:
        detail = f"the run ended before {not_run} tests ran" if not_run else "every selected test ran"
    session.config.stash[_ENDED] = {"how": how.value, "detail": detail, "not_run": not_run}
    xml = session.config.stash.get(xml_key, None)
    if xml is not None:
        xml.add_global_property(JUNIT_PROPERTY, how.value)
    if how is How.MAXFAIL and session.exitstatus == pytest.ExitCode.INTERRUPTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # stopped by its failures, as pytest without xdist
    if session.exitstatus == 0 and not_run:
        session.exitstatus = 1
