"""The CI gate's rules: new failure, expected failure that passes, unexpected skip, stale entry, warnings."""

from __future__ import annotations

import copy

import pytest

from payconform.results import baseline
from payconform.results.baseline import Entry

from .conftest import CONTRACT

FAIL = "suites/errors/test_replay.py::test_replay_conflict"
SKIP = "suites/authentication/test_revoked.py::test_revoked"
SLOW = "suites/events/test_delivery.py::test_delivered_soon"
PASS = "suites/conventions/test_money.py::test_decimal"


def kinds(results, entries, **kw) -> dict[str, set]:
    out: dict[str, set] = {}
    for f in baseline.check(copy.deepcopy(results), entries, CONTRACT, **kw):
        out.setdefault(f.kind, set()).add((f.test, f.severity))
    return out


def known(results) -> list[Entry]:
    """The baseline `baseline update` writes from the synthetic run."""
    return baseline.entries_from_results(results)


def test_update_writes_failures_and_skips_with_reasons(results, tmp_path):
    entries = known(results)
    assert [(e.test, e.expect, e.requirements) for e in entries] == [
        (FAIL, "failed", ["ERR-B"]), (SLOW, "failed", ["EVT-SLOW"]), (SKIP, "skipped", ["AUTH-OP"])]
    assert "409 IDEMPOTENCY_KEY_REUSED" in entries[0].reason and "-> 201" in entries[0].reason
    assert entries[2].reason == "needs operator: cannot revoke_key"
    path = baseline.dump(entries, tmp_path / "b.yaml")
    assert baseline.load(path) == entries
    assert path.read_text().startswith("# payconform baseline")


def test_the_known_state_passes_the_gate(results):
    gated = baseline.apply(copy.deepcopy(results), known(results), CONTRACT, "b.yaml")
    assert gated["gate"]["passed"] and gated["gate"]["findings"] == []
    rows = {t["nodeid"]: t for t in gated["tests"]}
    assert rows[FAIL]["verdict"] == "expected_failure" and rows[FAIL]["baseline_reason"]
    reqs = {r["id"]: r["verdict"] for r in gated["requirements"]}
    assert reqs["ERR-B"] == "expected_failure"


def test_a_new_failure_fails_the_gate(results):
    entries = [e for e in known(results) if e.test != FAIL]
    assert kinds(results, entries) == {"new_failure": {(FAIL, "error")}}


def test_an_expected_failure_that_passes_fails_the_gate(results):
    entries = known(results) + [Entry(PASS, "failed", "was broken", ["CONV-A"])]
    assert kinds(results, entries) == {"expected_failure_passed": {(PASS, "error")}}


def test_an_unexpected_skip_fails_the_gate(results):
    entries = [e for e in known(results) if e.test != SKIP]
    assert kinds(results, entries) == {"unexpected_skip": {(SKIP, "error")}}


def test_an_expected_skip_that_ran_fails_the_gate(results):
    entries = known(results) + [Entry(PASS, "skipped", "no operator", [])]
    assert kinds(results, entries) == {"expected_skip_ran": {(PASS, "error")}}


def test_an_entry_that_matched_nothing_fails_the_gate(results):
    entries = known(results) + [Entry("suites/x/test_renamed.py::test_old", "failed", "old ticket", ["ERR-B"])]
    assert kinds(results, entries) == {"unmatched_entry": {("suites/x/test_renamed.py::test_old", "error")}}


def test_an_entry_outside_the_selection_is_not_stale(results):
    results["run"]["select"] = ["conventions"]
    entries = known(results) + [Entry("suites/x/test_other.py::test_old", "failed", "old ticket", ["ERR-B"])]
    assert "unmatched_entry" not in kinds(results, entries)


def test_an_entry_for_another_requirement_does_not_match(results):
    entries = [e for e in known(results) if e.test != FAIL] + [Entry(FAIL, "failed", "other check", ["CONV-A"])]
    found = kinds(results, entries)
    assert found["new_failure"] == {(FAIL, "error")} and ("unmatched_entry" in found)


def test_approximate_timing_is_a_warning_unless_told_otherwise(results):
    entries = [e for e in known(results) if e.test != SLOW]
    assert kinds(results, entries) == {"warning": {(SLOW, "warning")}}
    assert baseline.apply(copy.deepcopy(results), entries, CONTRACT, None)["gate"]["passed"]
    assert kinds(results, entries, warnings_as_errors=True) == {"warning": {(SLOW, "error")}}
    assert not baseline.apply(copy.deepcopy(results), entries, CONTRACT, None,
                              warnings_as_errors=True)["gate"]["passed"]


def test_needs_run_slow_skips_are_a_choice_of_the_run(results):
    results["tests"][3].update(verdict="needs_slow", skip_reason="needs --run-slow (real time)")
    assert kinds(results, []).get("unexpected_skip") is None
    results["run"]["run_slow"] = True
    assert kinds(results, [])["unexpected_skip"] == {(SKIP, "error")}


@pytest.mark.parametrize("text, message", [
    ("expected: [{test: t}]\n", "needs `test` and `expect"),
    ("expected: [{test: t, expect: failed}]\n", "needs a `reason`"),
    ("expected: [: bad\n", "cannot read the baseline"),
])
def test_a_bad_baseline_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "b.yaml"
    path.write_text(text)
    with pytest.raises(baseline.BaselineError, match=message):
        baseline.load(path)


def test_parametrized_node_ids_match_literally_and_wildcards_work(results):
    results["tests"][1]["nodeid"] = FAIL + "[0001]"
    assert kinds(results, [Entry(FAIL + "[0001]", "failed", "r"), *known(results)[1:]]) == {}
    assert kinds(results, [Entry(FAIL + "[000?]", "failed", "r"), *known(results)[1:]]) == {}
    assert kinds(results, [Entry("suites/errors/*", "failed", "r"), *known(results)[1:]]) == {}
    assert "new_failure" in kinds(results, [Entry(FAIL + "[0002]", "failed", "r"), *known(results)[1:]])


def test_without_a_baseline_only_failures_and_warnings_count(results):
    assert kinds(results, None) == {"new_failure": {(FAIL, "error")}, "warning": {(SLOW, "warning")}}
