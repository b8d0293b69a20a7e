"""The order tests are handed to workers: each module's tests spread evenly over the run.

A run paced at the floor needs requests ready to go whenever the limits free a slot. Collection order
runs a module's tests back to back, and the tests of one module tend to wait on the same thing: the
webhook tests on deliveries (real time, few requests), the batch tests on the batch submission budget
(30 a minute for the whole run), the fuzz tests on the per-source-IP ceiling. Run together on every worker,
they leave the budget unused while all workers wait, several times a run. Spread, each kind of waiting overlaps with tests that send. A module whose tests share a fixture
wider than a test (module, class or package scope) stays in one block, so the fixture is made once.
Groups (``xdist_group``) are scheduled by xdist as one unit, first, whatever the order. Tests marked ``fill``
(``FILL_MARKER``) go last: they make many rows (or only those a list lacks, which the others have made by then),
and the events of many rows would hold up the deliveries other tests wait for. Tests marked ``late``
(``LATE_MARKER``) go after them: they check their rules on the answers the worker's other tests got and send
only what those did not get, which is least at the end. In a tier that runs marked tests
(``smoke``), and under ``--run-slow`` (where a test may wait out one of the spec's windows of minutes), the tests
marked ``long_wait`` (``LONG_WAIT_MARKER``: a minute or more of the sandbox's real time)
go first: there the run's floor is about as long as such a wait, and one started halfway ends the run late,
with the tests xdist queued behind it on the same worker (the shorter waits, a delivery's seconds, stay
spread: put first as well, they hold every worker while the key's minute goes unspent); in ``full`` the floor is many times the wait and spreading keeps a worker sending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import pytest

from .markers import FILL_MARKER, LATE_MARKER, LONG_WAIT_MARKER, active_for
from .session import get_state

T = TypeVar("T")
_SHARED_SCOPES = {"module", "class", "package"}


def spread(groups: Sequence[Sequence[T]], blocks: Sequence[bool] = ()) -> list[T]:
    """The members of ``groups`` (in collection order), each group's spread evenly over the result: the
    i-th of n members goes at fraction (i + 0.5) / n of the run; a group flagged in ``blocks`` stays whole,
    at its own place in the collection order. Ties keep the collection order."""
    keyed = []
    for g, members in enumerate(groups):
        whole = g < len(blocks) and blocks[g]
        for i, member in enumerate(members):
            where = (g + 0.5) / len(groups) if whole else (i + 0.5) / len(members)
            keyed.append((where, g, i, member))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]


def _split(items: Sequence[Any], marker: str) -> tuple[list[Any], list[Any]]:
    """(marked with ``marker``, the others), each in the order of ``items``."""
    marked = [i for i in items if i.get_closest_marker(marker) is not None]
    return marked, [i for i in items if i.get_closest_marker(marker) is None]


def fills_last(items: Sequence[Any]) -> list[Any]:
    """``items`` with those marked ``fill`` moved to the end and those marked ``late`` after them, each part in
    its own order."""
    filled, others = _split(items, FILL_MARKER)
    late, others = _split(others, LATE_MARKER)
    return others + filled + late


def long_waits_first(items: Sequence[Any]) -> list[Any]:
    """``items`` with those marked ``long_wait`` moved to the front, each part in its own order."""
    marked, others = _split(items, LONG_WAIT_MARKER)
    return marked + others


def _shares_fixtures(item: Any) -> bool:
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}) or {}
    return any(d.scope in _SHARED_SCOPES for chain in defs.values() for d in chain)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spread the conformance tests' modules over the run (every worker computes the same order)."""
    suite = [i for i in items if active_for(i)]
    if len(suite) < 2:
        return
    by_module: dict[Any, list[pytest.Item]] = {}
    for item in suite:
        by_module.setdefault(item.path, []).append(item)
    groups = list(by_module.values())
    ordered = spread(groups, [any(_shares_fixtures(i) for i in g) for g in groups])
    others = [i for i in items if not active_for(i)]
    ordered = fills_last(ordered)
    state = get_state(config)
    items[:] = (long_waits_first(ordered) if state.tier.marker or state.run_slow else ordered) + others
