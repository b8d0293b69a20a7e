"""A profile mismatch: the record and its reason, the client's detection of a profile route the target does not
serve, and a run's verdict, summary, JUnit, report and exit code (``--strict-profile``)."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET

import httpx
import pytest

from payconform.checks.expect import ContractViolation, expect_error, expect_status
from payconform.client import Api
from payconform.contract import Contract
from payconform.results import mismatch, skips
from payconform.results.verdicts import Verdict
from payconform.suite import ProfileMismatch
from payconform.target import Target

from .fake_project import PROFILE, cli, write_project

pytest_plugins = ["pytester"]

OVERRIDE = {"operations": {"pricePayout": {"path": "/payments/organizations/{orgId}/payouts/quote"}}}
CLIENT_PROFILE = {"operations": {
    "pricePayout": {"method": "POST", "path": "/payments/organizations/{orgId}/payouts/price", "idempotency": "none",
                    "source": "profile"},
    "getBalance": {"method": "GET", "path": "/payments/organizations/{orgId}/balance", "idempotency": "none",
                   "source": "spec"},
}}


def test_the_reason_reads_back_as_the_record() -> None:
    exc = ProfileMismatch("operations.pricePayout.path", "the target has no route\nPOST /x (404 ROUTE_NOT_FOUND)",
                          expected="POST /x", override=OVERRIDE)
    assert isinstance(exc, pytest.skip.Exception)
    lines = exc.msg.splitlines()
    assert lines[0] == "profile mismatch: operations.pricePayout.path: the target has no route POST /x (404 ROUTE_NOT_FOUND)"
    assert "      pricePayout:" in lines and "the profile says: POST /x" in lines
    assert mismatch.read(exc.msg) == exc.mismatch
    assert skips.verdict_of(exc.msg) is Verdict.PROFILE_MISMATCH
    untold = ProfileMismatch("sandbox.approval.threshold", "the policy shows 25000.00", expected=5000)
    assert mismatch.read(untold.msg) == mismatch.Mismatch("sandbox.approval.threshold", "the policy shows 25000.00",
                                                          "5000")
    assert "set in the target file's profile: sandbox.approval.threshold" in untold.msg
    assert mismatch.read("needs operator: cannot issue_key") is None


def test_overrides_merge_into_one_block() -> None:
    merged = mismatch.merge([OVERRIDE, None, {"operations": {"pricePayout": {"method": "PUT"}},
                                              "sandbox": {"approval": {"threshold": "25000.00"}}}])
    assert merged == {"operations": {"pricePayout": {"path": "/payments/organizations/{orgId}/payouts/quote",
                                                     "method": "PUT"}},
                      "sandbox": {"approval": {"threshold": "25000.00"}}}
    assert mismatch.override_yaml(merged).startswith("profile:\n  operations:\n")


def _api(status: int, body: dict) -> Api:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers={"x-request-id": "req_mm_1"})

    target = Target.from_dict({"base_url": "http://127.0.0.1:9/business/api/v1", "org_id": "ckorg1"})
    return Api(target, "svc_test_" + "a" * 32, contract=Contract(profile=CLIENT_PROFILE),
               transport=httpx.MockTransport(answer))


@pytest.mark.parametrize(("status", "kind", "field", "shown"), [
    (404, "ROUTE_NOT_FOUND", "path", "404 ROUTE_NOT_FOUND"),
    (405, "METHOD_NOT_ALLOWED", "method", "405"),
])
def test_a_profile_route_the_target_does_not_serve_is_a_mismatch(status, kind, field, shown) -> None:
    with _api(status, {"type": kind, "detail": "no route"}) as api:
        with pytest.raises(ProfileMismatch) as raised:
            api.op("pricePayout", json={})
        found = raised.value.mismatch
        assert found.entry == f"operations.pricePayout.{field}"
        assert found.seen == f"the target has no route POST /payments/organizations/{{orgId}}/payouts/price ({shown})"
        assert found.request_id == "req_mm_1" and "x-request-id: req_mm_1" in raised.value.msg
        assert api.op("pricePayout", json={}, route_mismatch=False).status == status  # a caller that judges it


def test_a_spec_route_answering_404_stays_a_failure() -> None:
    """A mutant must never turn into a mere mismatch: a route the spec shows, not served, fails its test."""
    with _api(404, {"type": "ROUTE_NOT_FOUND", "detail": "no route"}) as api:
        ex = api.op("getBalance")
        with pytest.raises(ContractViolation):
            expect_status(ex, 200)


def test_a_spec_field_gone_wrong_behind_a_profile_route_stays_a_failure() -> None:
    """The route is the profile's, the error body is the spec's: a body without the spec's `requestId` fails, it is
    no mismatch of the route."""
    with _api(400, {"type": "VALIDATION_ERROR", "status": 400, "detail": "amount is required"}) as api:
        ex = api.op("pricePayout", json={})
        with pytest.raises(ContractViolation) as raised:
            expect_error(ex, 400, "VALIDATION_ERROR")
        assert "requestId" in str(raised.value)


def test_a_profile_route_answering_another_404_is_the_test_s_to_judge() -> None:
    with _api(404, {"type": "NOT_FOUND", "detail": "no such quote"}) as api:
        assert api.op("pricePayout", json={}).status == 404


SUITE = '''
import pytest
from payconform.suite import ProfileMismatch, expect_status

@pytest.mark.req("DEMO-PASS")
def test_balance(api):
    expect_status(api.op("getBalance"), 200)

@pytest.mark.req("DEMO-FAIL")
def test_priced(api):
    api.op("fundSandbox", json={"amount": "1.00"})

@pytest.mark.req("AUTH-CLOCK")
def test_threshold(api):
    ex = api.op("getBalance")
    raise ProfileMismatch("sandbox.approval.threshold", "the policy shows 25000.00", expected="5000.00",
                          override={"sandbox": {"approval": {"threshold": "25000.00"}}}, exchange=ex)

@pytest.mark.req("AUTH-SLOW")
def test_spec_route_missing(api):
    expect_status(api.op("getMissing"), 200)
'''


@pytest.fixture
def project(pytester, monkeypatch):
    write_project(pytester.path)
    (pytester.path / "contract" / "profile.default.yaml").write_text(
        PROFILE + '  getMissing: {method: GET, path: "/payments/organizations/{orgId}/missing", idempotency: none, '
                  'source: spec}\n')
    (pytester.path / "suites" / "endpoints" / "test_demo.py").write_text(textwrap.dedent(SUITE))
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    return pytester


def _run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "suites", "--report-dir",
                                         "out", "--junitxml=out/junit.xml", *args)


def test_a_run_reports_mismatches_everywhere(project, ref_target) -> None:
    _, path = ref_target
    res = _run(project, "--target", str(path))
    out = res.stdout.str()
    assert res.ret == 1, out  # test_spec_route_missing fails: a spec route's 404 is no mismatch
    res.assert_outcomes(passed=1, failed=1, skipped=2)
    assert "tests: 1 passed, 1 failed, 2 profile mismatches, 0 skipped" in out
    assert "2 checks could not run as written: your deployment's choices differ from the profile: set these entries" in out
    assert "  operations.fundSandbox.path: the target has no route POST" in out
    assert "          threshold: '25000.00'" in out

    data = json.loads((project.path / "out" / "results.json").read_text())
    tests = {t["nodeid"].split("::")[-1]: t for t in data["tests"]}
    assert tests["test_priced"]["verdict"] == "profile_mismatch"
    assert tests["test_priced"]["mismatch"]["entry"] == "operations.fundSandbox.path"
    assert tests["test_threshold"]["mismatch"]["request_id"] == tests["test_threshold"]["request_ids"][0]
    assert tests["test_spec_route_missing"]["verdict"] == "failed"
    reqs = {r["id"]: r["verdict"] for r in data["requirements"]}
    assert (reqs["DEMO-FAIL"], reqs["AUTH-CLOCK"], reqs["AUTH-SLOW"]) == ("profile_mismatch", "profile_mismatch",
                                                                         "failed")
    rows = {m["entry"]: m for m in data["profile_mismatches"]}
    assert rows["sandbox.approval.threshold"]["override"] == {"sandbox": {"approval": {"threshold": "25000.00"}}}
    assert rows["operations.fundSandbox.path"]["tests"] == [tests["test_priced"]["nodeid"]]

    cases = {c.get("name"): c for c in ET.parse(project.path / "out" / "junit.xml").iter("testcase")}
    skipped = cases["test_threshold"].find("skipped")
    assert skipped is not None
    assert skipped.get("message").startswith("profile mismatch: sandbox.approval.threshold: the policy shows")

    html = (project.path / "out" / "index.html").read_text()
    block = html[html.index('id="mismatches"'):html.index('id="filters"')]
    assert "2 checks could not run as written because your deployment's choices differ" in block
    assert "threshold: &#39;25000.00&#39;" in block and "operations.fundSandbox.path" in block


@pytest.mark.parametrize(("strict", "code"), [((), 0), (("--strict-profile",), 1)])
def test_strict_profile_decides_the_exit_code(project, ref_target, strict, code) -> None:
    _, path = ref_target
    res = _run(project, "--target", str(path), "-k", "not test_spec_route_missing", *strict)
    assert res.ret == code, res.stdout.str()
    data = json.loads((project.path / "out" / "results.json").read_text())
    assert data["run"]["strict_profile"] is bool(strict)


def test_payconform_run_forwards_strict_profile(workdir) -> None:
    (workdir / "suites" / "endpoints" / "test_demo.py").write_text(textwrap.dedent(SUITE))
    lenient = cli(workdir, "run", "--report-dir", "r1", "-n", "0", "--", "-k", "test_threshold or test_balance")
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    strict = cli(workdir, "run", "--report-dir", "r2", "-n", "0", "--strict-profile", "--", "-k", "test_threshold")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "--strict-profile" in strict.stderr
