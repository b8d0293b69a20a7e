"""The profile-mismatch verdict in results.json, its schema, the CI gate, the failure causes and the HTML report."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from payconform.contract import Contract
from payconform.results import baseline
from payconform.results.causes import cause
from payconform.results.html import render
from payconform.results.records import ResultCollector, build_results, totals
from payconform.results.verdicts import Verdict, worst
from payconform.suite import ProfileMismatch

from .conftest import CONTRACT, SCHEMA_PATH, synthetic_tests

MISMATCHED = "suites/endpoints/test_pricing.py::test_priced"
PRICE = ProfileMismatch("operations.pricePayout.path", "the target has no route POST /payouts/price (404 "
                        "ROUTE_NOT_FOUND)", expected="POST /payouts/price",
                        override={"operations": {"pricePayout": {"path": "/payouts/quote"}}})


def _results(strict: bool = False, also_passed: bool = True) -> dict:
    collector = ResultCollector()
    collector.add(nodeid=MISMATCHED, when="call", outcome="skipped", duration=0.1,
                  blob={"requirements": ["CONV-A"], "request_ids": ["req_mm_7"]}, skip_reason=PRICE.msg)
    tests = synthetic_tests()[:3 if also_passed else 0] + collector.tests()
    run = {"started": "s", "finished": "f", "target": "http://h/business/api/v1", "contract_version": "1",
           "pytest_args": [], "strict_profile": strict}
    return build_results(run=run, tests=tests, contract=CONTRACT)


def test_the_verdict_sits_between_the_failures_and_the_passes() -> None:
    verdict = Verdict.PROFILE_MISMATCH
    assert not (verdict.is_failure or verdict.is_skip or verdict.covered or verdict.fails_gate)
    assert verdict.is_mismatch and verdict.testable and verdict.for_tests
    assert Verdict.EXPECTED_FAILURE.rank < verdict.rank < Verdict.PASSED.rank
    assert worst(["passed", "profile_mismatch", "needs_operator"]) is verdict
    assert worst(["profile_mismatch", "failed"]) is Verdict.FAILED
    assert verdict.look.bar not in {v.look.bar for v in Verdict if v is not verdict}


def test_results_carry_the_mismatch_per_test_requirement_and_run() -> None:
    data = _results()
    row = next(t for t in data["tests"] if t["nodeid"] == MISMATCHED)
    assert (row["outcome"], row["verdict"]) == ("skipped", "profile_mismatch")
    assert row["mismatch"]["entry"] == "operations.pricePayout.path" and "message" not in row
    reqs = {r["id"]: r["verdict"] for r in data["requirements"]}
    assert reqs["CONV-A"] == "profile_mismatch"  # passed + mismatch: its only non-pass is the mismatch
    assert data["profile_mismatches"] == [{"entry": "operations.pricePayout.path",
                                           "seen": "the target has no route POST /payouts/price (404 ROUTE_NOT_FOUND)",
                                           "expected": "POST /payouts/price",
                                           "override": {"operations": {"pricePayout": {"path": "/payouts/quote"}}},
                                           "tests": [MISMATCHED]}]
    t = totals(data)
    assert (t["profile_mismatches"], t["skipped"], t["covered"]) == (1, 0, 0)
    assert "profile_mismatches" not in build_results(run=data["run"], tests=synthetic_tests(), contract=CONTRACT)


def test_only_a_strict_run_fails_on_a_mismatch() -> None:
    assert totals(_results(also_passed=False))["overall"] == "passed"
    assert totals(_results(strict=True, also_passed=False))["overall"] == "failed"


def test_results_with_a_mismatch_follow_the_schema() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    data = _results(strict=True)
    validator.validate(data)
    validator.validate(baseline.apply(copy.deepcopy(data), [], CONTRACT, "b.yaml", strict_profile=True))


def test_a_baseline_can_expect_a_mismatch(tmp_path) -> None:
    data = _results(also_passed=False)
    entries = baseline.entries_from_results(data)
    assert [(e.test, e.expect) for e in entries] == [(MISMATCHED, "profile_mismatch")]
    assert entries[0].reason.startswith("profile mismatch: operations.pricePayout.path: the target has no route")
    assert baseline.load(baseline.dump(entries, tmp_path / "b.yaml")) == entries
    gated = baseline.apply(copy.deepcopy(data), entries, CONTRACT, "b.yaml", strict_profile=True)
    assert gated["gate"]["passed"] and not gated["gate"]["findings"]
    assert next(t for t in gated["tests"] if t["nodeid"] == MISMATCHED)["baseline_reason"] == entries[0].reason


@pytest.mark.parametrize(("strict", "severity"), [(False, "warning"), (True, "error")])
def test_an_unexpected_mismatch_is_an_error_only_when_strict(strict: bool, severity: str) -> None:
    findings = baseline.check(_results(also_passed=False), [], CONTRACT, strict_profile=strict)
    assert [(f.kind, f.severity, f.test) for f in findings] == [("unexpected_mismatch", severity, MISMATCHED)]


def test_an_expected_mismatch_that_runs_must_leave_the_baseline() -> None:
    data = _results(also_passed=False)
    entries = baseline.entries_from_results(data)
    row = next(t for t in data["tests"] if t["nodeid"] == MISMATCHED)
    row.update(outcome="passed", verdict="passed", skip_reason=None)
    assert [(f.kind, f.severity) for f in baseline.check(data, entries, CONTRACT)] == [("expected_mismatch_ran",
                                                                                       "error")]


def test_a_missing_route_is_called_the_spec_s_or_the_profile_s() -> None:
    contract = Contract(profile={"operations": {
        "pricePayout": {"method": "POST", "path": "/payments/organizations/{orgId}/payouts/price", "source": "profile"},
        "getPayout": {"method": "GET", "path": "/payments/organizations/{orgId}/payouts/{payoutId}", "source": "profile"},
        "getBalance": {"method": "GET", "path": "/payments/organizations/{orgId}/balance", "source": "spec"},
    }})
    answered = "target answered: {} http://h/business/api/v1/payments/organizations/o1/{} -> 404 ROUTE_NOT_FOUND"
    assert "a route the spec lists" in cause(answered.format("GET", "balance"), contract)
    profile = cause(answered.format("POST", "payouts/price"), contract)
    assert "a route the profile gives" in profile and "spec lists" not in profile
    assert "a route the run called" in cause(answered.format("GET", "nowhere"), contract)
    assert "a route the run called" in cause(answered.format("GET", "balance"))  # no contract: no claim


def test_the_report_opens_with_the_entries_to_set() -> None:
    html = render(_results(), CONTRACT)
    block = html[html.index('id="mismatches"'):html.index('id="filters"')]
    assert "1 check could not run as written because your deployment's choices differ from the profile: set these " \
           "entries" in block
    assert "<code>operations.pricePayout.path</code>" in block
    assert "profile:\n  operations:\n    pricePayout:\n      path: /payouts/quote" in block
    assert html.index('id="mismatches"') < html.index('id="part-')
    assert f".v-profile_mismatch {{ background: {Verdict.PROFILE_MISMATCH.look.badge}" in html
    assert '<pre class="mismatch">profile mismatch: operations.pricePayout.path' in html
    assert "1 profile mismatch, " in html
    assert 'id="mismatches"' not in render(build_results(run={}, tests=synthetic_tests(), contract=CONTRACT),
                                           CONTRACT)
