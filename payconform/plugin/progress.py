"""A line now and then on a long run, so a person can follow it: parts done of parts selected, requests sent of
the plan, and the time left at the pacing floor.

The controller (or a run without xdist) prints it with the terminal reporter's ``write_line``, between
pytest's own progress output, at most every ``EVERY`` seconds, on the next test that ends. The requests are
the counts each test's report brings (``payconform.pacing.accounting``, merged in ``state.counts``), so the
workers' requests reach it without a channel of their own. ``-q`` turns it off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pytest

from ..pacing.accounting import PREFLIGHT, part_of
from ..pacing.cost import estimate
from ..pacing.tiers import Pace
from .markers import is_suite_path
from .session import STATE, PayconformState
from .summary import planned_requests

EVERY = 30.0  # seconds between two progress lines
LISTENER = "payconform-progress"


@dataclass
class Progress:
    """What the run selected and what has ended; ``line`` says it in one line."""

    pace: Pace
    planned: int | None  # the tier's planned requests; None for a selection (a part of the tier)
    clock: Callable[[], float] = time.monotonic
    tests: dict[str, str] = field(default_factory=dict)  # node id -> part, of every selected test
    done: set[str] = field(default_factory=set)
    last: float = 0.0

    def __post_init__(self) -> None:
        self.last = self.clock()

    def selected(self, nodeids: Iterable[str]) -> None:
        self.tests.update((n, part_of(n)) for n in nodeids)

    def ended(self, nodeid: str) -> None:
        self.done.add(nodeid)

    def due(self) -> bool:
        """Whether a line is due (``EVERY`` seconds since the last); a due line is counted as printed."""
        now = self.clock()
        if now - self.last < EVERY or not self.tests:
            return False
        self.last = now
        return True

    def line(self, sent: int) -> str:
        parts = set(self.tests.values())
        open_parts = {part for nodeid, part in self.tests.items() if nodeid not in self.done}
        finished = len(self.done & self.tests.keys())
        left_tests = len(self.tests) - finished
        if self.planned is not None:
            requests = f"{sent:,} of about {self.planned:,} planned requests sent"
            left = max(self.planned - sent, 0)
        else:  # a selection: what is left, at the requests its finished tests spent on average
            requests = f"{sent:,} requests sent"
            left = round(sent / finished * left_tests) if finished else 0
        seconds = estimate(left, self.pace.keys, self.pace.rate_limit, self.pace.ip_rate_limit)
        return (f"payconform progress: {len(parts) - len(open_parts)} of {len(parts)} parts done "
                f"({finished} of {len(self.tests)} tests); {requests}; about {_minutes(seconds)} left at the "
                f"pacing floor ({self.pace.per_minute()} requests/min)")


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def _sent(state: PayconformState) -> int:
    return sum(int(t.get("requests", 0)) for scope, t in state.counts.scopes.items() if scope != PREFLIGHT)


class _Listener:
    """The controller's hooks, with the run's state and its ``Progress``."""

    def __init__(self, config: pytest.Config, state: PayconformState, progress: Progress) -> None:
        self.config, self.state, self.progress = config, state, progress

    def _suite_ids(self, nodeids: Iterable[str]) -> list[str]:
        root = self.config.rootpath
        return [n for n in nodeids if is_suite_path(root / n.split("::", 1)[0], self.config)]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Without xdist: the selected tests are the session's."""
        self.progress.selected(self._suite_ids(item.nodeid for item in session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """xdist controller: every worker collects the same tests; the first to report names them."""
        if not self.progress.tests:
            self.progress.selected(self._suite_ids(ids))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A test's last report (its teardown, after its counts were recorded): a line when one is due."""
        if report.when != "teardown":
            return
        self.progress.ended(report.nodeid)
        if self.progress.due():
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(self.progress.line(_sent(self.state)))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """The controller follows a run against a target, unless ``-q``."""
    state = config.stash.get(STATE, None)
    if state is None or state.is_worker or state.target is None or config.get_verbosity() < 0:
        return
    planned = None if state.select else planned_requests(state)
    config.pluginmanager.register(_Listener(config, state, Progress(Pace.of(state.target), planned)), LISTENER)


def pytest_unconfigure(config: pytest.Config) -> None:
    listener = config.pluginmanager.get_plugin(LISTENER)
    if listener is not None:
        config.pluginmanager.unregister(listener)
