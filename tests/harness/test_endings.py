"""How a run ends early: the breaker (target stopped answering), --max-duration, and "not run" rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import httpx
import jsonschema
import pytest

import payconform
from payconform.transport import breaker
from payconform.cli.pytest_proc import run_pytest
from payconform.contract import Contract
from payconform.results.html import render
from payconform.results.records import ResultCollector, build_results, totals
from payconform.run import Run
from payconform.transport.sender import TargetError, Transport

from .fake_project import write_project

pytest_plugins = ["pytester"]

SCHEMA = Path(payconform.__file__).parent / "schemas" / "results.schema.json"


@pytest.fixture
def tripwire(tmp_path):
    """A breaker over ``tmp_path``, as the plugin gives each process's run."""
    return breaker.Breaker(tmp_path)


def test_the_breaker_trips_after_consecutive_failures_only(tmp_path) -> None:
    b = breaker.Breaker(tmp_path, threshold=3)
    b.failed("reset")
    b.failed("reset")
    b.answered()  # an answer of any status: the target is alive, the count starts again
    b.failed("reset")
    b.failed("reset")
    assert b.tripped() is None
    b.failed("no answer within 2s")
    why = b.tripped()
    assert why is not None and "3 requests in a row" in why and "no answer within 2s" in why


def test_a_trip_is_seen_by_every_process_sharing_the_directory(tmp_path) -> None:
    worker_a, worker_b = breaker.Breaker(tmp_path), breaker.Breaker(tmp_path)
    for _ in range(breaker.THRESHOLD):
        worker_a.failed("could not connect")
    assert worker_b.tripped() == worker_a.tripped() is not None


def _transport(handler, tripwire: breaker.Breaker) -> Transport:
    target = SimpleNamespace(base_url="http://127.0.0.1:9/business/api/v1", request_timeout=1.0)
    run = Run()
    run.breaker = tripwire
    return Transport(target, run=run, http=httpx.MockTransport(handler))


def test_the_transport_trips_the_breaker_and_then_sends_nothing(tripwire) -> None:
    sent: list[str] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        raise httpx.ConnectError("connection refused", request=request)

    transport = _transport(refuse, tripwire)
    for _ in range(breaker.THRESHOLD):
        with pytest.raises(TargetError, match="could not connect"):
            transport.send("GET", "/balance")
    assert tripwire.tripped() is not None
    with pytest.raises(TargetError, match=breaker.CAUSE) as info:
        transport.send("GET", "/balance")
    assert info.value.unreachable and len(sent) == breaker.THRESHOLD  # the last one never went out


def test_answers_of_any_status_keep_the_breaker_closed(tripwire) -> None:
    statuses = iter([500, 404, 200, 503] * 3)
    transport = _transport(lambda request: httpx.Response(next(statuses), json={}), tripwire)
    for _ in range(12):
        transport.send("GET", "/balance")
    assert tripwire.tripped() is None


def _not_run_results() -> tuple[dict, Contract]:
    c = ResultCollector()
    c.add(nodeid="t::ran", when="call", outcome="passed", duration=0.1, blob={"requirements": ["A-1"]})
    c.add(nodeid="t::late", when="setup", outcome="skipped", duration=0,
          skip_reason="not run: --max-duration reached before it started", blob={"requirements": ["A-1"]})
    c.not_run("t::never", ["A-2"], [], "not run: the run was interrupted")
    contract = Contract(requirements={rid: {"id": rid, "part": "conventions", "section": "S", "quote": "q",
                                            "testable": True} for rid in ("A-1", "A-2")})
    return build_results(run={"started": "s", "finished": "f", "target": "http://h", "contract_version": "1"},
                         tests=c.tests(), contract=contract), contract


def test_not_run_rows_verdicts_totals_and_report() -> None:
    data, contract = _not_run_results()
    tests = {t["nodeid"]: t for t in data["tests"]}
    assert (tests["t::late"]["outcome"], tests["t::late"]["verdict"]) == ("not_run", "not_run")
    assert (tests["t::never"]["outcome"], tests["t::never"]["verdict"]) == ("not_run", "not_run")
    reqs = {r["id"]: r["verdict"] for r in data["requirements"]}
    assert reqs == {"A-1": "not_run", "A-2": "not_run"}  # one test passed, one not run: not passed
    t = totals(data)
    assert (t["passed"], t["skipped"], t["not_run"], t["overall"]) == (1, 0, 2, "passed")
    assert "2 not run" in render(data, contract)
    jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_the_run_interrupts_pytest_still_running_after_the_hard_stop(capfd: pytest.CaptureFixture[str]) -> None:
    """A child that would sleep a minute is interrupted at the hard stop: the run says so, and the results
    settle its exit code (a child waited out would answer its own 0)."""
    ended = run_pytest([sys.executable, "-c", "import time; time.sleep(60)"], stop_after=0.5)
    assert ended.hard_stop and ended.signum is None and ended.code != 0
    assert "--max-duration reached with tests still running" in capfd.readouterr().err


def test_max_duration_reports_the_tests_left_as_not_run(pytester, monkeypatch, ref_target) -> None:
    write_project(pytester.path)
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    _, path = ref_target
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "suites", "--target",
                                        str(path), "--report-dir", "out", "--payconform-max-duration", "0.001")
    out = res.stdout.str()
    assert res.ret == 1, out
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    not_run = [t for t in data["tests"] if t["verdict"] == "not_run"]
    # none passed or failed: those the target could run are not run, the others skip for what they need
    assert not_run and all(t["outcome"] == "skipped" for t in data["tests"] if t not in not_run), data["tests"]
    assert all(t["skip_reason"].startswith("not run: --max-duration") for t in not_run)
    assert f"{len(not_run)} not run" in out


def test_a_test_stopped_while_it_ran_is_not_run_not_failed() -> None:
    c = ResultCollector()
    c.add(nodeid="t::inflight", when="setup", outcome="passed", duration=0.1, blob={"requirements": ["A-1"]})
    c.not_run("t::inflight", ["A-1"], [], "not run: the run was interrupted while it ran")
    (row,) = c.tests()
    assert (row["outcome"], row["verdict"], row["duration"]) == ("not_run", "not_run", 0.1)
