import json

from payconform.contract import Contract
from payconform.results.html import render, write_report
from payconform.results.records import ResultCollector, build_results, requirement_rows, totals, write_json
from payconform.results.skips import verdict_of

CONTRACT = Contract(requirements={
    "A-1": {"id": "A-1", "part": "conventions", "section": "S", "quote": "Quote <script>alert(1)</script>", "testable": True},
    "A-2": {"id": "A-2", "part": "errors", "section": "S", "quote": "q2", "testable": True},
    "A-3": {"id": "A-3", "part": "errors", "section": "S", "quote": "q3", "testable": True},
    "A-4": {"id": "A-4", "part": "limits", "section": "S", "quote": "q4", "testable": False, "reason": "not shown"},
    "A-5": {"id": "A-5", "part": "limits", "section": "S", "quote": "q5", "testable": False, "reason": "dashboard only"},
    "A-6": {"id": "A-6", "part": "limits", "section": "S", "quote": "q6", "testable": True},
})


def blob(*reqs, transcript=None):
    b = {"requirements": list(reqs), "needs": [], "profile_ops": [], "request_ids": ["r1"]}
    if transcript is not None:
        b["transcript"] = transcript
    return b


def collect():
    c = ResultCollector()
    # passed
    c.add(nodeid="t::pass", when="setup", outcome="passed", duration=0.1, blob=blob("A-1"))
    c.add(nodeid="t::pass", when="call", outcome="passed", duration=0.2, blob=blob("A-1"))
    c.add(nodeid="t::pass", when="teardown", outcome="passed", duration=0.1, blob=blob("A-1"))
    # failed in call, with transcript
    c.add(nodeid="t::fail", when="setup", outcome="passed", duration=0, blob=blob("A-1", "A-2"))
    c.add(nodeid="t::fail", when="call", outcome="failed", duration=0, message="[A-2] ...\nexpected: 409",
          blob=blob("A-1", "A-2", transcript=[{"method": "GET"}]))
    c.add(nodeid="t::fail", when="teardown", outcome="passed", duration=0, blob=blob("A-1", "A-2"))
    # skipped in setup: needs operator
    c.add(nodeid="t::skip", when="setup", outcome="skipped", duration=0, skip_reason="needs operator", blob=blob("A-3"))
    c.add(nodeid="t::skip", when="teardown", outcome="passed", duration=0, blob=blob("A-3"))
    # error in teardown after passing
    c.add(nodeid="t::err", when="setup", outcome="passed", duration=0, blob=blob("A-6"))
    c.add(nodeid="t::err", when="call", outcome="passed", duration=0, blob=blob("A-6"))
    c.add(nodeid="t::err", when="teardown", outcome="failed", duration=0, message="boom", blob=blob("A-6", transcript=[]))
    return c


def test_rows():
    tests = {t["nodeid"]: t for t in collect().tests()}
    assert tests["t::pass"]["outcome"] == "passed" and tests["t::pass"]["duration"] == 0.4
    assert "transcript" not in tests["t::pass"] and "message" not in tests["t::pass"]
    assert tests["t::fail"]["verdict"] == "failed" and tests["t::fail"]["transcript"] == [{"method": "GET"}]
    assert tests["t::fail"]["message"].startswith("[A-2]")
    assert tests["t::skip"]["verdict"] == "needs_operator" and tests["t::skip"]["skip_reason"] == "needs operator"
    assert tests["t::err"]["outcome"] == "error" and tests["t::err"]["verdict"] == "failed"


def test_requirement_verdicts():
    reqs = {r["id"]: r for r in requirement_rows(CONTRACT, collect().tests())}
    assert reqs["A-1"]["verdict"] == "failed"  # one passed, one failed
    assert reqs["A-1"]["tests"] == ["t::fail", "t::pass"]
    assert reqs["A-2"]["verdict"] == "failed"
    assert reqs["A-3"]["verdict"] == "needs_operator"
    assert reqs["A-4"]["verdict"] == "not_specified"
    assert reqs["A-5"]["verdict"] == "not_testable"
    assert reqs["A-6"]["verdict"] == "failed"
    assert list(reqs) == ["A-1", "A-2", "A-3", "A-4", "A-5", "A-6"]


def test_skip_verdicts():
    assert verdict_of("needs operator: cannot advance_clock").value == "needs_operator"
    assert verdict_of("needs clock").value == "needs_clock"
    assert verdict_of("needs --run-slow (real time)").value == "needs_slow"
    assert verdict_of("needs read_only_key").value == "skipped"
    assert verdict_of("not run: --max-duration reached").value == "not_run"
    assert verdict_of(None).value == "skipped"


def test_results_json_and_report(tmp_path):
    data = build_results(run={"started": "s", "finished": "f", "target": "http://h/business/api/v1",
                              "contract_version": "1", "pytest_args": []}, tests=collect().tests(), contract=CONTRACT)
    path = write_json(tmp_path / "results.json", data)
    again = json.loads(path.read_text())
    assert set(again) == {"run", "tests", "requirements", "unlock"}
    assert {"id", "part", "section", "quote", "testable", "verdict", "tests"} <= set(again["requirements"][0])
    t = totals(again)
    assert (t["tests"], t["passed"], t["failed"], t["errors"], t["skipped"]) == (4, 1, 1, 1, 1)
    assert t["covered"] == 0 and t["requirements"] == 6
    html = render(again, CONTRACT)
    assert "<script>alert" not in html and "&lt;script&gt;" in html  # escaped
    assert html.index('id="part-conventions"') < html.index('id="part-errors"') < html.index('id="part-limits"')
    assert "not specified" in html and "needs operator" in html
    assert "<link" not in html and "src=" not in html  # self-contained
    assert write_report(tmp_path, again, CONTRACT).name == "index.html"


def test_ids_unknown_to_the_catalog_still_reported():
    c = ResultCollector()
    c.add(nodeid="x", when="call", outcome="passed", duration=0, blob=blob("NEW-1"))
    rows = requirement_rows(Contract(), c.tests())
    assert rows == [{"id": "NEW-1", "part": None, "section": None, "quote": None, "testable": True, "reason": None,
                     "tolerates": None, "needs": None, "level": "must", "verdict": "passed", "tests": ["x"], "counts": {"passed": 1}}]
