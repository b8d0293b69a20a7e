"""A deployment that chose otherwise wherever the spec says "not shown" (the reference's `--choices other`:
other paths, envelopes, scenario selection, threshold, corridor fields, dwell times, a body field name) is
never failed for those choices. Run as a user would: with the default profile every difference is a profile
mismatch naming the entry to set; with what `payconform profile suggest` makes of the deployment's OpenAPI
document and that run, the payout scenarios (selected the other way) still are, naming `select_by`; with what
it makes of both runs the whole suite passes with no mismatch."""

from __future__ import annotations

import pytest

from .conftest import SuiteRun

pytestmark = pytest.mark.xdist_group("variant-runs")


def _mismatches(run: SuiteRun) -> list[dict]:
    return [t for t in run.tests if t.get("verdict") == "profile_mismatch"]


def _no_failure(run: SuiteRun, why: str) -> None:
    assert run.tests, f"the suite ran no test:\n{run.output[-3000:]}"
    failures = run.with_outcome("failed", "error")
    assert not failures, f"{why}:\n{run.describe_failures()}"
    assert run.returncode == 0, run.output[-3000:]


def test_with_the_default_profile_every_difference_is_a_mismatch(other_choice_runs: dict[str, SuiteRun]) -> None:
    run = other_choice_runs["other-choices-default-profile"]
    _no_failure(run, "a choice the spec leaves open was failed")
    named = run.results.get("profile_mismatches") or []
    assert _mismatches(run) and named, "no profile mismatch was reported against a deployment that chose otherwise"
    assert all(m["entry"].startswith(("operations.", "sandbox.", "corridors.")) and m["seen"] for m in named), named


def test_a_payout_scenario_selected_the_other_way_is_a_mismatch_of_select_by(
        other_choice_runs: dict[str, SuiteRun]) -> None:
    """The deployment selects payout scenarios by amount digits; its document cannot say so, and the profile
    says by account digits: the tests judged on a scenario's outcome (failed, returned, processing skipped; their
    ledger rows and events) end as mismatches naming `select_by` with the value that fits, never as failures."""
    run = other_choice_runs["other-choices-documented-profile"]
    _no_failure(run, "a scenario selected the other way was failed")
    named = {m["entry"]: m for m in run.results.get("profile_mismatches") or []}
    entry = "sandbox.payout_scenarios.select_by"
    assert entry in named and "amount_minor_suffix" in str(named[entry]), named
    assert len([t for t in _mismatches(run) if entry in (t.get("skip_reason") or "")]) >= 5, \
        [t["nodeid"] for t in _mismatches(run)]
    assert {m["entry"].split(".")[0] for m in named.values()} == {"sandbox"}, sorted(named)


def test_with_the_suggested_profile_the_suite_passes(other_choice_runs: dict[str, SuiteRun]) -> None:
    run = other_choice_runs["other-choices-suggested-profile"]
    _no_failure(run, "failed against the deployment with the profile `profile suggest` wrote for it")
    left = [f"{t['nodeid']}: {(t.get('skip_reason') or '').splitlines()[0]}" for t in _mismatches(run)]
    assert not left, "profile mismatches with the suggested profile:\n" + "\n".join(left)
