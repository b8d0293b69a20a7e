"""The report's sections beyond the verdicts: what would unlock more, and what each requirement tolerates."""

from __future__ import annotations

from payconform.plugin.markers import MANY_REQUESTS_SKIP
from payconform.results.html import render
from payconform.results.records import build_results
from payconform.results.skips import verdict_of
from payconform.results.unlock import capability, unlock_rows

from .conftest import CONTRACT, synthetic_results


def test_skip_reasons_name_their_capability() -> None:
    assert capability("needs operator: cannot suspend_org") == "operator"
    assert capability("needs --run-slow (real time)") == "real_time"
    assert capability(MANY_REQUESTS_SKIP.reason) == "many_requests"
    assert verdict_of(MANY_REQUESTS_SKIP.reason).value == "needs_slow"  # a choice of the run, as real time is
    assert capability("needs read_only_key") == "read_only_key"
    assert capability("needs second_org") == "second_org"
    assert capability("static skip") is None and capability(None) is None


def test_rows_count_requirements_that_no_test_covers_most_valuable_first() -> None:
    tests = [
        {"nodeid": "a", "outcome": "skipped", "skip_reason": "needs operator", "requirements": ["R1", "R2"]},
        {"nodeid": "b", "outcome": "skipped", "skip_reason": "needs operator: cannot x", "requirements": ["R3"]},
        {"nodeid": "c", "outcome": "skipped", "skip_reason": "needs live_key", "requirements": ["R4"]},
        {"nodeid": "d", "outcome": "passed", "requirements": ["R4"]},
    ]
    reqs = [{"id": "R1", "verdict": "needs_operator"}, {"id": "R2", "verdict": "needs_operator"},
            {"id": "R3", "verdict": "needs_operator"}, {"id": "R4", "verdict": "passed"}]
    rows = unlock_rows(tests, reqs)
    assert [(r["capability"], r["requirements"], r["tests"]) for r in rows] == [("operator", 3, 2), ("live_key", 0, 1)]
    assert "--live-key" in rows[1]["supplied_by"]


def test_results_and_report_carry_the_table() -> None:
    results = synthetic_results()
    assert results["unlock"] == [{"capability": "operator", "requirements": 1, "tests": 1,
                                  "supplied_by": results["unlock"][0]["supplied_by"]}]
    html = render(results, CONTRACT)
    assert 'id="unlock"' in html and "What would unlock more" in html
    assert build_results(run={}, tests=[], contract=CONTRACT)["unlock"] == []


def test_the_report_shows_what_each_requirement_tolerates() -> None:
    results = synthetic_results()
    row = next(r for r in results["requirements"] if r["id"] == "CONV-A")
    row["tolerates"] = [{"reading": "`150` as well as `150.00`", "because": "Decimal strings beside a currency"}]
    html = render(results, CONTRACT)
    assert 'class="tolerates"' in html and "`150` as well as `150.00`" in html
