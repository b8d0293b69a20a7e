"""Tolerated variants: behaviour the spec allows. The whole suite must pass on each (no false alarms).

The variants run in a few composite runs (`variant_groups`); a failing run names every variant applied in it,
and `PAYCONFORM_VARIANTS=each` (or a list of names) runs them one by one to find the one at fault.
"""

from __future__ import annotations

import pytest

from . import variant_groups
from .conftest import REPORTS, SuiteRun, variant_plan, variants

pytestmark = pytest.mark.xdist_group("variant-runs")


@pytest.mark.parametrize("run_id", list(variant_plan()))
def test_the_suite_passes_on_a_tolerated_variant(run_id: str, variant_runs: dict[str, SuiteRun]) -> None:
    run, applied = variant_runs[run_id], variant_plan()[run_id]
    assert run.tests, f"the suite ran no test against variants {applied}:\n{run.output[-3000:]}"
    failures = run.with_outcome("failed", "error")
    assert not failures, (f"false alarm(s) against the tolerated variants {applied} (applied together; rerun with "
                          f"{variant_groups.ENV}=each to single one out):\n{run.describe_failures()}")


def test_every_variant_runs_and_no_run_holds_two_alternatives() -> None:
    names = {v["name"] for v in variants()}
    runs = variant_groups.composite(sorted(names))
    assert sorted(n for run in runs for n in run) == sorted(names)
    assert not [run for run in runs for n in run if variant_groups.excluded_by(n) & set(run)]
    assert all(group <= names for group in variant_groups.EXCLUSIVE), "EXCLUSIVE names an unknown variant"


def test_the_variants_are_listed_beside_the_mutants(variant_runs: dict[str, SuiteRun]) -> None:
    """reports/project-tests/variants.md, beside kill-matrix.md: each variant, what it allows, its run's result."""
    run_of = {name: run_id for run_id, names in variant_plan().items() for name in names}
    lines = ["# Tolerated variants", "", "Behaviour the spec allows; the whole suite must pass under each "
             "(the mutants, which it must fail under, are in kill-matrix.md).", "",
             "| variant | what the spec allows | run | suite result |", "|---|---|---|---|"]
    for v in variants():
        run = variant_runs[run_of[v["name"]]]
        failed = len(run.with_outcome("failed", "error"))
        result = f"{len(run.with_outcome('passed'))} passed, {failed} failed"
        lines.append(f"| `{v['name']}` | {v['doc'].replace('|', '/')} | {run_of[v['name']]} | {result} |")
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "variants.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert all(f"| `{v['name']}` |" in "\n".join(lines) for v in variants())
