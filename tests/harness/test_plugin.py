"""The plugin on a tiny fake suite (pytester, in a subprocess) against the fake reference server."""

import json
import textwrap
from pathlib import Path

import pytest

from payconform.target import Target

from .fake_project import write_project

pytest_plugins = ["pytester"]

@pytest.fixture
def project(pytester, monkeypatch):
    write_project(pytester.path)
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    return pytester


def run(pytester, *args):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


def load_results(pytester):
    return json.loads((pytester.path / "out" / "results.json").read_text())


def test_full_run_results_and_report(project, ref_target):
    target, path = ref_target
    res = run(project, "suites", "--target", str(path), "--report-dir", "out")
    out = res.stdout.str()
    assert res.ret == 1, out
    res.assert_outcomes(passed=5, failed=1, skipped=4)
    assert "requirements covered: 2 of 8" in out
    assert "test_balance_created [DEMO-FAIL]: expected: HTTP 201" in out
    assert "needs --run-slow" in out

    data = load_results(project)
    assert set(data) == {"run", "tests", "requirements", "unlock", "cost"}
    run_info = data["run"]
    assert run_info["target"] == target.base_url and run_info["started"] and run_info["finished"]
    assert "contract_version" in run_info and isinstance(run_info["pytest_args"], list)
    tests = {t["nodeid"].split("::")[-1]: t for t in data["tests"]}
    assert tests["test_balance"]["verdict"] == "passed"
    assert tests["test_balance"]["requirements"] == ["DEMO-PASS"]
    assert len(tests["test_balance"]["request_ids"]) == 1
    failed = tests["test_balance_created"]
    assert failed["outcome"] == "failed" and failed["verdict"] == "failed"
    assert '[DEMO-FAIL] Endpoints > Balance: "Balance is created with 201."' in failed["message"]
    assert failed["transcript"][0]["request_headers"]["x-api-key"] == "svc_test_****"
    assert tests["test_slow"]["verdict"] == "needs_slow"
    assert tests["test_slow"]["skip_reason"] == "needs --run-slow (real time)"
    assert tests["test_signed"]["skip_reason"] == "needs signing_key_id"
    assert tests["test_signed_factory"]["skip_reason"] == "needs signing_key_id"
    for t in data["tests"]:
        assert set(t) >= {"nodeid", "requirements", "outcome", "duration", "skip_reason", "verdict",
                          "request_ids", "profile_ops"}
    reqs = {r["id"]: r for r in data["requirements"]}
    assert [r["id"] for r in data["requirements"]][:2] == ["DEMO-PASS", "DEMO-FAIL"]
    assert reqs["DEMO-PASS"]["verdict"] == "passed" and len(reqs["DEMO-PASS"]["tests"]) == 3
    assert reqs["DEMO-FAIL"]["verdict"] == "failed"
    assert reqs["AUTH-CLOCK"]["verdict"] == "passed"
    assert reqs["AUTH-SLOW"]["verdict"] == "needs_slow"
    assert reqs["AUTH-SIGN"]["verdict"] == "skipped"
    assert reqs["CONV-UNTESTED"]["verdict"] == "not_tested"
    assert reqs["CONV-NOT-SHOWN"]["verdict"] == "skipped"  # a test names it: the test's verdict wins
    assert tests["test_static_skip"]["skip_reason"] == "static skip"
    assert reqs["CONV-NOT-TESTABLE"]["verdict"] == "not_testable"

    html = (project.path / "out" / "index.html").read_text()
    assert "DEMO-FAIL" in html and "Balance is created with 201." in html and "<details>" in html
    assert html.index("Conventions") < html.index("Endpoints") < html.index("Authentication")
    assert "http://" not in html.replace(target.base_url, "").replace(target.root_url, "")  # no external resources
    everything = out + html + (project.path / "out" / "results.json").read_text()
    for secret in target.secrets():
        assert secret not in everything


def test_xdist_run_and_select(project, ref_target):
    _, path = ref_target
    res = run(project, "suites", "--target", str(path), "--report-dir", "out", "-n", "2",
              "--select", "DEMO-*")
    assert res.ret == 1, res.stdout.str()
    res.assert_outcomes(passed=3, failed=1)
    data = load_results(project)
    assert len(data["tests"]) == 4
    assert {r["id"]: r["verdict"] for r in data["requirements"]}["DEMO-PASS"] == "passed"
    assert all(t["request_ids"] for t in data["tests"])
    res = run(project, "suites", "--target", str(path), "--report-dir", "out2", "--select", "authentication")
    res.assert_outcomes(passed=2, skipped=3)  # authentication part: AUTH-* tests


def test_requests_are_counted_across_workers(project, ref_target):
    """Each worker counts what its tests send; the controller's cost adds every worker's (one request id per
    attempt on the fake reference, no retries: the counts equal the request ids the tests saw)."""
    _, path = ref_target
    res = run(project, "suites", "--target", str(path), "--report-dir", "out", "-n", "2")
    data = load_results(project)
    cost, tests = data["cost"], data["tests"]
    assert cost["requests"] == sum(t["requests"] for t in tests) == sum(len(t["request_ids"]) for t in tests) > 0
    per_part = {part: sum(t["requests"] for t in tests if f"/{part}/" in t["nodeid"])
                for part in ("endpoints", "authentication")}
    assert cost["by_part"] == {part: n for part, n in per_part.items() if n} and per_part["endpoints"] > 0
    assert cost["by_phase"]["operator"] > 0  # the clock and fresh_org tests go through the operator
    assert cost["rate_limited"] == {"planned": 0, "unplanned": 0} and cost["floor_seconds"] > 0
    pool = {name for name in cost["by_credential"] if name.startswith("api_key_pool[")}  # `api` and `own_org` keys
    assert set(cost["by_credential"]) - pool <= {"api_key", "read_only_key", "none", "issued"}
    assert "wall/floor" in res.stdout.str() and "requests per part: " in res.stdout.str()


def test_needs_without_operator(project, ref_target, tmp_path):
    target, _ = ref_target
    target = Target.from_dict({**target.to_dict(), "operator": {"adapter": "none"}})
    path = target.dump(tmp_path / "t.yaml")
    res = run(project, "suites", "--target", str(path), "--report-dir", "out", "--select", "AUTH-CLOCK")
    res.assert_outcomes(skipped=2)
    data = load_results(project)
    verdicts = {t["nodeid"].split("::")[-1]: (t["verdict"], t["skip_reason"]) for t in data["tests"]}
    assert verdicts == {"test_clock": ("needs_clock", "needs clock"),
                        "test_fresh_org": ("needs_operator", "needs operator")}
    assert {r["id"]: r["verdict"] for r in data["requirements"]}["AUTH-CLOCK"] == "needs_operator"


def test_flags_override_target(project, ref_target):
    target, _ = ref_target
    res = run(project, "suites", "--base-url", target.base_url, "--org-id", target.org_id,
              "--api-key", target.api_key, "--report-dir", "out", "-k", "test_balance and not created")
    res.assert_outcomes(passed=1)


def test_bad_target_is_a_usage_error(project, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("base_url: http://h/api\norg_id: ck1\n")
    res = run(project, "suites", "--target", str(bad))
    assert res.ret == 4
    assert "must end with the fixed prefix /business/api/v1" in res.stderr.str()


def test_no_target(project):
    res = run(project, "suites", "-k", "test_slow or test_balance_created")
    res.assert_outcomes(errors=2)  # every conformance test errors with the same clear message
    assert "payconform: no target. Pass --target FILE" in res.stdout.str()


def test_collection_checks_req_marker(project, ref_target):
    _, path = ref_target
    (project.path / "suites" / "endpoints" / "test_bad.py").write_text(textwrap.dedent('''
        import pytest

        def test_unmarked():
            pass

        @pytest.mark.req("DEMO-PASS", "NOPE-1")
        def test_unknown():
            pass
    '''))
    res = run(project, "suites", "--target", str(path), "--report-dir", "out")
    assert res.ret == 2
    out = res.stdout.str()
    assert "test_bad.py::test_unmarked: no @pytest.mark.req" in out
    assert "test_bad.py::test_unknown: unknown requirement id 'NOPE-1'" in out


def test_project_tests_unaffected(pytester, monkeypatch):
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    assert "= payconform =" not in res.stdout.str() and "payconform target" not in res.stdout.str()
    assert not (pytester.path / "reports").exists()


def test_plugin_modules_and_public_names(pytester):
    """The package registers each of its modules with pytest, without the warning pytest gives for a plugin
    module imported before it is registered; a test's requirement ids and needs are public."""
    pytester.makepyfile(test_plain='''
        import pytest
        from payconform.plugin import is_suite_path, needs, requirement_ids

        @pytest.mark.req("A-1", ["A-2", "A-1"])
        @pytest.mark.needs("operator", "clock")
        def test_public(request):
            modules = ("options", "session", "markers", "recording", "summary", "fixtures")
            assert all(request.config.pluginmanager.has_plugin(f"payconform.plugin.{m}") for m in modules)
            assert requirement_ids(request.node) == ["A-1", "A-2"]
            assert needs(request.node) == ["operator", "clock"]
            assert not is_suite_path(request.node.path, request.config)
    ''')
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    res.assert_outcomes(passed=1)
    assert "PytestAssertRewriteWarning" not in res.stdout.str()


def test_default_timeout(project, ref_target):
    _, path = ref_target
    (project.path / "suites" / "endpoints" / "test_t.py").write_text(textwrap.dedent('''
        import pytest

        @pytest.mark.req("DEMO-PASS")
        def test_timeout_marker(request):
            assert request.node.get_closest_marker("timeout").args == (120,)

        @pytest.mark.req("DEMO-PASS")
        @pytest.mark.timeout(7)
        def test_own_marker(request):
            assert request.node.get_closest_marker("timeout").args == (7,)
    '''))
    res = run(project, "suites/endpoints/test_t.py", "--target", str(path), "--report-dir", "out")
    res.assert_outcomes(passed=2)


def test_embedded_mode(project, monkeypatch):
    monkeypatch.setenv("PAYCONFORM_REFERENCE_MODULE", "fake_reference")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent))
    res = run(project, "suites", "--payconform-embedded", "--report-dir", "out", "-n", "2",
              "-k", "test_balance and not created or test_fresh_org")
    assert res.ret == 0, res.stdout.str() + res.stderr.str()
    res.assert_outcomes(passed=2)
    data = load_results(project)
    assert data["run"]["target"].startswith("http://127.0.0.1:")


def test_xdist_group_honoured(project, ref_target):
    _, path = ref_target
    (project.path / "suites" / "endpoints" / "test_group.py").write_text(textwrap.dedent('''
        import os, time, pytest
        pytestmark = [pytest.mark.req("DEMO-PASS"), pytest.mark.xdist_group("g")]

        @pytest.mark.parametrize("i", range(6))
        def test_grouped(i):
            time.sleep(0.05)
            with open(os.path.join(os.path.dirname(__file__), "workers.txt"), "a") as fh:
                fh.write(os.environ.get("PYTEST_XDIST_WORKER", "-") + "\\n")
    '''))
    res = run(project, "suites/endpoints/test_group.py", "--target", str(path), "--report-dir", "out", "-n", "2")
    res.assert_outcomes(passed=6)
    workers = (project.path / "suites" / "endpoints" / "workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1
    tests = load_results(project)["tests"]
    assert len(tests) == 6 and not any(t["nodeid"].endswith("@g") for t in tests)


WEB_TEST = '''
def test_the_web_app(base_url):
    assert base_url == "http://app.example.test"
'''


def test_coexists_with_pytest_base_url(project, ref_target):
    """pytest-base-url (pytest-playwright, pytest-selenium) owns --base-url: both plugins' tests still run."""
    target, _ = ref_target
    (project.path / "web").mkdir()
    (project.path / "web" / "test_web.py").write_text(WEB_TEST)
    res = run(project, "web", "--base-url", "http://app.example.test")
    res.assert_outcomes(passed=1)
    assert "payconform target" not in res.stdout.str()  # a web app's base URL is not a payconform target
    res = run(project, "suites", "--base-url", target.base_url, "--org-id", target.org_id,
              "--api-key", target.api_key, "--report-dir", "out", "-k", "test_balance and not created")
    res.assert_outcomes(passed=1)
    res = run(project, "suites", "--payconform-base-url", target.base_url, "--payconform-org-id", target.org_id,
              "--payconform-api-key", target.api_key, "--report-dir", "out", "-k", "test_balance and not created")
    res.assert_outcomes(passed=1)


def test_registers_base_url_itself_without_pytest_base_url(project, ref_target):
    target, _ = ref_target
    res = run(project, "-p", "no:base_url", "suites", "--base-url", target.base_url, "--org-id", target.org_id,
              "--api-key", target.api_key, "--report-dir", "out", "-k", "test_balance and not created")
    res.assert_outcomes(passed=1)
