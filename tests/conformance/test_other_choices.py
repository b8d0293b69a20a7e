"""A deployment that chose otherwise wherever the spec says "not shown" (the reference's `--choices other`:
other paths, envelopes, scenario selection, threshold, corridor fields, dwell times, a body field name) is
never failed for those choices: with the default profile each difference a smoke run (a test of every catalog
row) meets is a profile mismatch naming the entry to set, and with the profile that fits it the whole suite passes
with no mismatch."""

from __future__ import annotations

import pytest

from .conftest import SuiteRun

pytestmark = pytest.mark.xdist_group("variant-runs")


def _mismatches(run: SuiteRun) -> list[dict]:
    return [t for t in run.tests if t.get("verdict") == "profile_mismatch"]


def test_with_the_default_profile_every_difference_is_a_mismatch(other_choice_runs: dict[str, SuiteRun]) -> None:
    run = other_choice_runs["other-choices-default-profile"]
    assert run.tests, f"the suite ran no test:\n{run.output[-3000:]}"
    failures = run.with_outcome("failed", "error")
    assert not failures, f"a choice the spec leaves open was failed:\n{run.describe_failures()}"
    named = run.results.get("profile_mismatches") or []
    assert _mismatches(run) and named, "no profile mismatch was reported against a deployment that chose otherwise"
    assert all(m["entry"].startswith(("operations.", "sandbox.", "corridors.")) and m["seen"] for m in named), named
    assert run.returncode == 0, run.output[-3000:]


def test_with_the_fitting_profile_the_suite_passes(other_choice_runs: dict[str, SuiteRun]) -> None:
    run = other_choice_runs["other-choices-fitting-profile"]
    assert run.tests, f"the suite ran no test:\n{run.output[-3000:]}"
    failures = run.with_outcome("failed", "error")
    assert not failures, f"failed against the deployment with its own profile:\n{run.describe_failures()}"
    left = [f"{t['nodeid']}: {(t.get('skip_reason') or '').splitlines()[0]}" for t in _mismatches(run)]
    assert not left, "profile mismatches with the fitting profile:\n" + "\n".join(left)
    assert run.returncode == 0, run.output[-3000:]


def test_a_payout_scenario_selected_the_other_way_is_a_mismatch_of_select_by(
        other_choice_runs: dict[str, SuiteRun]) -> None:
    """The deployment selects payout scenarios by amount digits, the profile says by account digits: the tests
    judged on a scenario's outcome (failed, returned, processing skipped; their ledger rows and events) end as
    mismatches naming `select_by` with the value that fits, never as failures."""
    run = other_choice_runs["other-choices-scenarios-by-account"]
    assert run.tests, f"the run ran no test:\n{run.output[-3000:]}"
    failures = run.with_outcome("failed", "error")
    assert not failures, f"a scenario selected the other way was failed:\n{run.describe_failures()}"
    named = {m["entry"]: m for m in run.results.get("profile_mismatches") or []}
    entry = "sandbox.payout_scenarios.select_by"
    assert entry in named and "amount_minor_suffix" in str(named[entry]), named
    assert len(_mismatches(run)) >= 5, [t["nodeid"] for t in _mismatches(run)]
