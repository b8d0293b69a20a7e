"""The kill matrix: every mutant is caught by a test of its requirement, and every test catches a mutant.

A mutant breaks exactly one behaviour the spec requires; the suite run restricted to the mutant's
requirements must fail. Conversely a conformance test that no mutant makes fail has not been shown to be
able to fail at all. The matrix is written to reports/project-tests/kill-matrix.md.
"""

from __future__ import annotations

import pytest

from .conftest import FUZZ_KILLERS, REPORTS, SuiteRun, mutants

pytestmark = pytest.mark.xdist_group("reference-runs")

MUTANTS = mutants()


@pytest.mark.parametrize("name", [m["name"] for m in MUTANTS])
def test_mutant_is_killed_by_a_test_of_its_requirement(name: str, mutant_runs: dict[str, SuiteRun]) -> None:
    run = mutant_runs[name]
    reqs = next(m["reqs"] for m in MUTANTS if m["name"] == name)
    assert run.tests, f"no suite test names any of {reqs}, so nothing can kill mutant {name!r}:\n{run.output[-2000:]}"
    killers = run.with_outcome("failed", "error")
    assert killers, (f"mutant {name!r} ({reqs}) survived: all {len(run.tests)} tests of its requirements passed: "
                     + ", ".join(t["nodeid"] for t in run.tests))


def test_the_contract_fuzz_killers_are_mutants() -> None:
    """The mutants that run the contract fuzz tests for their kill evidence exist (a renamed one would leave
    those tests to the fuzz-* mutants alone, and the matrix would say so only as survivors)."""
    missing = set(FUZZ_KILLERS) - {m["name"] for m in MUTANTS}
    assert not missing, f"FUZZ_KILLERS names no registered mutant: {sorted(missing)}"


def test_every_tested_requirement_has_a_mutant_aimed_at_it(suite_tests: list[dict]) -> None:
    """A requirement a test names is shown able to fail only by a mutant that breaks it: a test killed by another
    requirement's mutant proves that other requirement, not its own."""
    aimed = {req for m in MUTANTS for req in m["reqs"]}
    named = {req for t in suite_tests for req in t.get("requirements") or []}
    missing = sorted(named - aimed)
    assert not missing, ("requirements named by conformance tests that no mutant breaks (write one aimed at a clause "
                         "of each, see payconform/reference/mutants/):\n" + "\n".join(f"- {r}" for r in missing))


def test_every_conformance_test_is_killed_by_a_mutant(pristine_run: SuiteRun,
                                                      mutant_runs: dict[str, SuiteRun]) -> None:
    passed = pristine_run.with_outcome("passed")
    killed_by: dict[str, list[str]] = {nodeid: [] for nodeid in passed}
    for name, run in mutant_runs.items():
        for nodeid in run.with_outcome("failed", "error"):
            killed_by.setdefault(nodeid, []).append(name)
    _write_matrix(killed_by, passed)
    survivors = {n: passed[n].get("requirements") for n in passed if not killed_by[n]}
    assert not survivors, ("conformance tests that no mutant makes fail (write a mutant for each):\n"
                           + "\n".join(f"- {n} {r}" for n, r in sorted(survivors.items())))


def _write_matrix(killed_by: dict[str, list[str]], passed: dict[str, dict]) -> None:
    REPORTS.mkdir(parents=True, exist_ok=True)
    lines = ["# Kill matrix", "", "Each conformance test and the mutants that make it fail (the tolerated variants, which "
             "it must pass under, are in variants.md).", "", "| test | requirements | killed by |", "|---|---|---|"]
    for nodeid in sorted(passed):
        reqs = ", ".join(passed[nodeid].get("requirements") or [])
        lines.append(f"| `{nodeid}` | {reqs} | {', '.join(sorted(killed_by[nodeid])) or '**none**'} |")
    (REPORTS / "kill-matrix.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
