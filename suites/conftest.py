"""Fixtures every part shares on top of the plugin's: the webhook receiver's mailboxes skip, with one
reason, when the target cannot reach the receiver (`_support/reach.py`); `timed` gives a test whose
requirement needs only a key the fastest way to let the profile's seconds pass, `slow_timed` one that waits
out the spec's minutes (in real time under `--run-slow`). Each worker notes the rows its
tests create and removes what the API can remove when its tests are over (`_support/leftovers.py`), and the
answers that show an added operation served (`_support/versioning.py`); what the workers share for the
whole run lives in the run's directory (`_support/runwide.py`), and the controller removes the rows made
for it once every worker is done."""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import MANY_REQUESTS, needs, run_of, runs_many_requests

from ._support import runwide
from ._support.leftovers import LEFTOVERS
from ._support.machines import plan_walks
from ._support.payments import plan_crowds
from ._support.pool import spread
from ._support.reach import unreachable
from ._support.realtime import REAL_TIME, Timed, real_clock
from ._support.versioning import SEEN


def _reachable(request: pytest.FixtureRequest, server: Any, value: Any) -> Any:
    """``value``, or a skip ("needs receiver: ...") when the target cannot reach the receiver."""
    reason = unreachable(request, server)
    if reason:
        pytest.skip(reason)
    return value


@pytest.fixture
def webhook_receiver(request: pytest.FixtureRequest, webhook_server, webhook_receiver):
    """The plugin's mailbox, where the target can reach the receiver."""
    return _reachable(request, webhook_server, webhook_receiver)


@pytest.fixture
def webhook_receiver_factory(request: pytest.FixtureRequest, webhook_server, webhook_receiver_factory):
    """The plugin's mailbox factory, where the target can reach the receiver."""
    return _reachable(request, webhook_server, webhook_receiver_factory)


@pytest.fixture
def timed(request: pytest.FixtureRequest, own_org) -> Timed:
    """Where a test lets the profile's seconds pass (a batch run's or a payout's timeline). With an operator
    clock: a fresh organization whose clock is moved, so nothing is waited for. Without one: the target's own
    organization in real time (`realtime.REAL_TIME`; a wait longer than `REAL_WAIT` skips), never moving the
    clock of an organization other tests share; its timed reads then go out on the target's read-only key
    where it has one (`Timed.reads`). The requirement needs only a key either way."""
    try:
        clock = request.getfixturevalue("clock")
        org = request.getfixturevalue("fresh_org")()
    except pytest.skip.Exception:
        target = request.getfixturevalue("target")
        reader = request.getfixturevalue("api_as")("read_only_key") if target.has("read_only_key") else None
        return Timed(own_org().api, REAL_TIME, reader)
    return Timed(org.api, clock)


@pytest.fixture
def slow_timed(request: pytest.FixtureRequest, own_org, run_slow: bool):
    """Factory: `slow_timed(seconds)` -> `Timed`, for a test that waits out one of the spec's windows of
    minutes, `seconds` its longest wait. With an operator clock: a fresh organization whose clock is moved, so
    nothing is waited for. Without one, under `--run-slow` (the deep tier): the target's own organization,
    each wait up to `realtime.SLOW_WAIT` in real time, the test isolated by what it makes; else it skips with
    `needs --run-slow` before making anything."""

    def make(seconds: float) -> Timed:
        try:
            clock = request.getfixturevalue("clock")
            org = request.getfixturevalue("fresh_org")()
        except pytest.skip.Exception:
            clock = real_clock(seconds, run_slow)
            return Timed(own_org().api, clock)
        return Timed(org.api, clock)

    return make


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "payout_walk(scenario, reads=1): reads a real-time walk of the payout "
                            "scenario (`_support.machines.scenario_walk`), `reads` times a step")
    config.addinivalue_line("markers", "crowds(n): reads the crowded link with at least n payments "
                            "(`_support.payments.crowded_link`)")


def pytest_sessionstart(session: pytest.Session) -> None:
    runwide.use(run_of(session.config).run_dir)


def pytest_collection_finish(session: pytest.Session) -> None:
    run = run_of(session.config)
    run.observe(LEFTOVERS.note)
    run.observe(SEEN.note)
    many = runs_many_requests(session.config)
    running = [i for i in session.items if many or MANY_REQUESTS not in needs(i)]
    plan_walks(running, many_requests=many)
    plan_crowds(running)


@pytest.hookimpl(tryfirst=True)  # before the plugin hands this worker's request counts over: the sweep counts
def pytest_sessionfinish(session: pytest.Session) -> None:
    try:
        run = run_of(session.config)
    except KeyError:  # the plugin did not configure this session
        return
    shared = run.run_dir
    if shared is not None and run.worker:
        LEFTOVERS.hand_over(shared)
    elif shared is not None:
        LEFTOVERS.take_over(shared)
    if run.target is None or not run.target.pool or not LEFTOVERS.rows \
            or session.config.getoption("payconform_keep_created", False):
        return
    api = run.api(run.target.pool[0])
    try:
        with spread(api) as pick:  # with a key pool, each removal on its least used key
            LEFTOVERS.sweep(api, pick)
    finally:
        api.close()
