"""The ``req`` and ``needs`` markers: which tests are conformance tests, what they check, what they need.

A conformance test is a test below a ``suites/`` directory; it must name known requirement ids (its module
fails to collect otherwise), ``--select`` keeps the tests of the requirements, parts or names it gives
(``selected``), ``--tier smoke`` keeps the tests marked ``smoke``, and a test whose ``needs`` the target cannot
meet skips with the reason the report counts. A ``breadth`` test, whose cases put one check to several routes or
inputs, runs on one key (no pool, no ``--run-slow``) one case per requirement it names (``leave_out_repeats``).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from .. import paths as _paths
from ..contract import Contract, run_contract
from ..results.skips import Kind, Needs
from ..target import CREDENTIAL_NAMES
from ..pacing.tiers import SMOKE_MARKER
from .options import DEFAULT_TIMEOUT
from .session import NO_TARGET, PayconformState, get_state

FILL_MARKER = "fill"
LONG_WAIT_MARKER = "long_wait"
LATE_MARKER = "late"
MANY_REQUESTS = "many_requests"
MANY_REQUESTS_SKIP = Needs(Kind.MANY_REQUESTS, "on one key, the requests of this one check would take more than a "
                                                "minute of the key's budget")
BREADTH_MARKER = "breadth"
REPEAT_DETAIL = ("on one key, one case of a test that puts one check to several routes or inputs runs per "
                 "requirement; [{kept}] checks every requirement of this case")


def is_suite_path(path: Path, config: pytest.Config) -> bool:
    """Whether a test file is a conformance test: below a ``suites/`` directory (inside the rootdir)."""
    path = Path(path)
    try:
        parts = path.relative_to(config.rootpath).parts
    except ValueError:
        parts = path.parts
    if "suites" in parts[:-1]:
        return True
    try:
        path.relative_to(_paths.suites_dir())
        return True
    except ValueError:
        return False


def active_for(item: pytest.Item) -> bool:
    """Whether the plugin acts on ``item``: a conformance test, or any test of a run given a target."""
    return get_state(item.config).explicit or is_suite_path(item.path, item.config)


def _marker_values(item: pytest.Item, name: str) -> list[str]:
    """The arguments of every ``name`` marker on ``item`` (lists flattened), in order, each once."""
    out: list[str] = []
    for mark in item.iter_markers(name):
        for arg in mark.args:
            for value in arg if isinstance(arg, (list, tuple)) else [arg]:
                if str(value) not in out:
                    out.append(str(value))
    return out


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement ids a test checks (its ``req`` markers)."""
    return _marker_values(item, "req")


def needs(item: pytest.Item) -> list[str]:
    """What a test needs beyond the api key (its ``needs`` markers)."""
    return _marker_values(item, "needs")


def runs_many_requests(config: pytest.Config) -> bool:
    """Whether the run spends many requests on one check (the ``many_requests`` need): with ``--run-slow`` (the
    deep tier) or a key pool to send them over. A one-key run leaves such a check to ``deep``: each of its
    requests is a hundredth of the key's minute (Limits, "Default rate")."""
    return _spends_many(get_state(config))


def _spends_many(state: PayconformState) -> bool:
    return state.run_slow or (state.target is not None and len(state.target.pool) > 1)


def leave_out_repeats(items: list[pytest.Item], state: PayconformState) -> None:
    """On one key (no pool, no ``--run-slow``), skip each case of a ``breadth`` test whose requirements the
    test's earlier cases that will run already name: the run checks every requirement at a request or two
    each instead of once per route (a full run is every requirement the credentials allow, 1,500
    requests on one key). The cases left out are the same check on another list, route or input; ``deep``
    and a key pool run them all. A case counts as running unless it carries a skip marker or a need the
    target cannot meet (``unmet_need``), so a requirement is never left to a case that will not run."""
    if state.target is None or _spends_many(state):
        return
    kept: dict[str, tuple[set[str], str]] = {}
    for item in items:
        if item.get_closest_marker(BREADTH_MARKER) is None:
            continue
        test = item.nodeid.split("[", 1)[0]
        reqs, covered = set(requirement_ids(item)), kept.get(test, (set(), ""))
        if covered[1] and reqs <= covered[0]:
            repeat = Needs(Kind.MANY_REQUESTS, REPEAT_DETAIL.format(kept=covered[1]))
            item.add_marker(pytest.mark.skip(reason=repeat.reason))
        elif not any(item.iter_markers("skip")) and not any(item.iter_markers("skipif")) \
                and unmet_need(state, needs(item)) is None:
            callspec = getattr(item, "callspec", None)
            kept[test] = (covered[0] | reqs, covered[1] or (callspec.id if callspec else item.name))


def in_tier(item: pytest.Item, marker: str) -> bool:
    """Whether a tier that runs the tests marked ``marker`` runs ``item``: ``@pytest.mark.smoke`` takes every
    case of a test, ``@pytest.mark.smoke(ids=[...])`` the parametrized cases with those ids (a representative
    row set of a table-driven test, the other rows being checked by other tests of the tier)."""
    mark = item.get_closest_marker(marker)
    if mark is None:
        return False
    ids = mark.kwargs.get("ids")
    callspec = getattr(item, "callspec", None)
    return not ids or (callspec is not None and callspec.id in ids)


def selected(item: pytest.Item, contract: Contract, patterns: list[str]) -> bool:
    """Whether ``--select`` keeps a conformance test: a pattern is a requirement id glob, a part slug (the part
    of a requirement it names, or its folder) or a test name glob (``test_links_walk``, ``test_x[*]``). A
    ``sweep`` test (the fuzz phase) checks cross-cutting requirements on every answer: a part slug selects it
    only by its own folder, so ``--select conventions`` does not pull in the fuzz phase."""
    names = (item.name, getattr(item, "originalname", item.name))
    if any(fnmatch.fnmatchcase(name, pat.replace("[", "[[]")) for name in names for pat in patterns):
        return True
    if item.get_closest_marker("sweep") is not None:
        return contract.matches(requirement_ids(item), patterns, extra_parts=[item.path.parent.name],
                                id_parts=False)
    return contract.matches(requirement_ids(item), patterns, extra_parts=[item.path.parent.name])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): requirement ids from contract/requirements.yaml that this test checks")
    config.addinivalue_line("markers", "needs(*what): what the test needs beyond the api key "
                                       "(operator, clock, real_time, many_requests, read_only_key, ...)")
    config.addinivalue_line("markers", f"{SMOKE_MARKER}(ids=None): runs in the smoke tier (--tier smoke, the "
                                       "pull-request gate); ids: only these parametrized cases")
    config.addinivalue_line("markers", f"{FILL_MARKER}: makes many rows (or a list's shortfall, `at_least`): runs "
                                       "after the other tests, whose rows then cost it nothing and whose events "
                                       "do not wait behind its own")
    config.addinivalue_line("markers", f"{LATE_MARKER}: checks its rules on the answers the other tests got "
                                       "(`versioning.SEEN`) and sends only what they did not: runs after them")
    config.addinivalue_line("markers", f"{LONG_WAIT_MARKER}: waits a minute or more of the sandbox's real time "
                                       "without an operator clock: in the smoke tier it starts first")
    config.addinivalue_line("markers", f"{BREADTH_MARKER}: its cases put one check to several routes or inputs: on "
                                       "one key (no pool, no --run-slow) one case per requirement runs")
    config.addinivalue_line("markers", "sweep: checks its requirements on every answer of a sweep over the contract "
                                       "(the fuzz phase); --select picks it by name, requirement id or its own part, "
                                       "never by the parts of the requirements it checks along the way")


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    rep = yield
    if not rep.passed or not rep.result:
        return rep
    items = [i for i in rep.result if isinstance(i, pytest.Item) and is_suite_path(i.path, collector.config)]
    if not items:
        return rep
    known = run_contract().requirements
    problems: list[str] = []
    for item in items:
        ids = requirement_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: no @pytest.mark.req(...) marker; every conformance test names "
                            "the requirement(s) it checks")
        elif known:
            for rid in ids:
                if rid not in known:
                    problems.append(f"{item.nodeid}: unknown requirement id {rid!r} "
                                    "(not in contract/requirements.yaml)")
    if problems:
        rep.outcome = "failed"
        rep.longrepr = "payconform: invalid conformance tests:\n" + "\n".join(f"  {p}" for p in problems)
        rep.result = []
    return rep


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = get_state(config)
    state.suite_items = sum(1 for i in items if is_suite_path(i.path, config))
    marker = state.tier.marker
    if state.select or marker:
        contract = run_contract()
        keep, drop = [], []
        for item in items:
            if not is_suite_path(item.path, config) or (
                    (not marker or in_tier(item, marker))
                    and (not state.select or selected(item, contract, state.select))):
                keep.append(item)
            else:
                drop.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    leave_out_repeats(items, state)
    # default per-test timeout for conformance tests when the user gave none
    if config.pluginmanager.hasplugin("timeout") and getattr(config, "_env_timeout", None) is None:
        for item in items:
            if active_for(item) and item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(DEFAULT_TIMEOUT))


def pytest_itemcollected(item: pytest.Item) -> None:
    """A receiver on a fixed port (behind a tunnel) can be bound by one process only: the tests that use it
    share one xdist group, so they all run on the worker that binds it. (Here rather than in
    ``pytest_collection_modifyitems``, whose order against xdist's, which reads the groups, is not fixed.)"""
    target = get_state(item.config).target
    port = str((target.webhooks if target else {}).get("listen") or "").rpartition(":")[2]
    if not port.isdigit() or int(port) == 0:
        return
    if "webhook_server" in getattr(item, "fixturenames", ()) and item.get_closest_marker("xdist_group") is None:
        item.add_marker(pytest.mark.xdist_group("webhook-receiver"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not active_for(item):
        return
    state = get_state(item.config)
    if state.target is None:
        pytest.fail(NO_TARGET, pytrace=False)
    _skip_unmet_needs(state, needs(item))


def _skip_unmet_needs(state: PayconformState, wanted: list[str]) -> None:
    """Skip with the need the report counts (``needs operator``, ...) when the target lacks what is needed."""
    need = unmet_need(state, wanted)
    if need is not None:
        need.skip()


def unmet_need(state: PayconformState, wanted: list[str]) -> Needs | None:
    """The first of ``wanted`` the target cannot meet, or None; needs the plugin does not
    check (profile, webhook_receiver, isolation, ...) are informational."""
    target = state.target
    assert target is not None
    for need in wanted:
        if need == "operator":
            if state.operator() is None:
                return Needs(Kind.OPERATOR)
        elif need == "clock":
            op = state.operator()
            if op is None or "advance_clock" not in getattr(op, "capabilities", set()):
                return Needs(Kind.CLOCK)
        elif need == "real_time":
            if not state.run_slow:
                return Needs(Kind.REAL_TIME, note="real time")
        elif need == MANY_REQUESTS:
            if not _spends_many(state):
                return MANY_REQUESTS_SKIP
        elif need in CREDENTIAL_NAMES:
            if not target.has(need):
                return Needs(Kind.CREDENTIAL, need)
        elif need == "signing_key":
            if not (target.has("signing_key_id") and target.has("signing_private_key")):
                return Needs(Kind.SIGNING_KEY)
        elif need == "second_org":
            if not target.other_org_id:
                return Needs(Kind.SECOND_ORG)
    return None
