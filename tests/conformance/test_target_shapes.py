"""The three target shapes users hold, run on one reference server (`shapes.run_shapes`; the full shape twice): no run fails,
the no-operator shapes cover what a key can check, and the full shape loses nothing on a busy organization.

Four runs, minutes of real-time waits each: they start in the background when the session collects
these tests (`shapes_launch`), and these tests come last, so they only wait for what is left of the runs (each
worker that runs one reads the runs' summary). `PAYCONFORM_SHAPES=0` leaves
them out; `benchmarks/target_shapes.py` prints the same figures.
"""

from __future__ import annotations

import pytest

from . import shapes_launch
from .shapes import RUN_TIMEOUT, ShapeRun, ShapeRuns

pytestmark = [pytest.mark.shapes,
              pytest.mark.skipif(not shapes_launch.enabled(),
                                 reason=f"{shapes_launch.ENV_VAR}=0 leaves the target-shape runs out")]

FLOORS = {"keys": 300, "credentials": 360}  # requirements passed, at least
DECLARED_LIMIT = "the target file declares rate_limit"  # the skip of a rate-limit check at a scaled limit


@pytest.fixture(scope="module")
def shape_runs(pytestconfig: pytest.Config) -> ShapeRuns:
    return ShapeRuns.load(shapes_launch.summary(pytestconfig, timeout=2 * RUN_TIMEOUT))


def _describe(run: ShapeRun, deliveries: dict[str, dict]) -> str:
    """The run's counts and failures, and what the server did with its organization's webhook deliveries."""
    return (f"{run.shape} run {run.round}: {run.row()}\n{run.run.describe_failures()}\n"
            f"deliveries of the {run.shape} organization (every round): {deliveries.get(run.shape)}")


def _headline(bad: list[ShapeRun]) -> str:
    """One line naming each failed test of each bad run (a CI log may show only an assertion's first line)."""
    return "; ".join(f"{run.shape} run {run.round}: "
                     + (", ".join(run.run.with_outcome("failed", "error")) or f"exit {run.run.returncode}")
                     for run in bad)


def test_every_run_of_every_shape_fails_nothing(shape_runs: ShapeRuns) -> None:
    assert shape_runs.runs, "no shape was run"
    bad = [run for run in shape_runs.runs if not run.run.tests or run.counts["failed"] or run.run.returncode]
    assert not bad, _headline(bad) + "\n\n" + "\n\n".join(_describe(run, shape_runs.deliveries) for run in bad)


@pytest.mark.parametrize("shape", sorted(FLOORS))
def test_a_no_operator_shape_passes_its_floor_of_requirements(shape_runs: ShapeRuns, shape: str) -> None:
    assert shape_runs.of(shape), f"the {shape} shape was not run"
    short = [run for run in shape_runs.of(shape) if len(run.passed_requirements) < FLOORS[shape]]
    assert not short, "\n".join(f"{run.shape} run {run.round}: {len(run.passed_requirements)} requirements passed, "
                                f"fewer than {FLOORS[shape]}" for run in short)


def test_no_run_had_the_server_deliver_to_a_host_outside_this_machine(shape_runs: ShapeRuns) -> None:
    """Every webhook endpoint the runs registered, in any organization, points at this machine: the suite
    gives the target no outside address to call (nothing may call an outside host at run time)."""
    assert not shape_runs.outside_hosts, f"endpoints point at {shape_runs.outside_hosts}"


def test_the_full_shape_passes_on_a_busy_organization_what_it_passes_first(shape_runs: ShapeRuns) -> None:
    """The full target's second run, on an organization holding every shape's first-round rows, passes every
    requirement its first run passed."""
    first, *later = shape_runs.of("full")
    for run in later:
        lost = sorted(first.passed_requirements - run.passed_requirements)
        assert not lost, f"full run {run.round} no longer passes {lost}"


def test_only_the_rate_limit_checks_skip_for_the_scaled_limits(shape_runs: ShapeRuns) -> None:
    """What the scaled limits change, and nothing else: the full shape skips only for what the run leaves out by
    default (real time) and the rate-limit checks of a declared limit, each saying so."""
    for run in shape_runs.of("full"):
        skipped = {t["nodeid"]: t.get("skip_reason") or "" for t in run.run.with_outcome("skipped").values()}
        other = {n: r for n, r in skipped.items() if not r.startswith(("needs --run-slow", "no seeder for ", DECLARED_LIMIT))}
        assert not other, "\n".join(f"- {n}: {r}" for n, r in other.items())
        declared = [n for n, r in skipped.items() if r.startswith(DECLARED_LIMIT)]
        assert declared and all("/limits/" in n for n in declared), declared
