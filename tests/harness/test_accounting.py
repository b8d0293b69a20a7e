"""Request accounting: the transport counts every attempt where it is sent; the controller merges the counts."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from types import SimpleNamespace

import httpx
import pytest

from payconform.pacing import accounting
from payconform.contract import Contract
from payconform.operator import HttpOperator
from payconform.pacing.pacer import ANONYMOUS, Pacer, credential_id, route_limits
from payconform.run import Run
from payconform.transport.sender import Transport

KEY = "svc_test_" + "a" * 32
POOL_KEY = "svc_test_" + "b" * 32
OTHER = "svc_test_" + "c" * 32
BASE = "http://target.test/business/api/v1"
HISTORY_ROUTE = [{"name": "balance_history", "per_minute": 60, "scope": "credential",
                  "routes": ["GET /payments/organizations/{orgId}/balance/history"]}]


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    accounting.take_all()
    yield
    accounting.take_all()


def _transport(tmp_path, answers: list[httpx.Response], exempt=()) -> tuple[Transport, list[float]]:
    slept: list[float] = []
    pacer = Pacer(tmp_path / "p.sqlite3", routes=route_limits(HISTORY_ROUTE), exempt=exempt)
    replies = iter(answers)
    http = httpx.MockTransport(lambda request: next(replies))
    return Transport(SimpleNamespace(base_url=BASE, request_timeout=1.0), run=Run(pacer=pacer), sleep=slept.append,
                     http=http), slept


def test_each_attempt_is_counted_in_the_running_test_per_credential_and_route(tmp_path, record) -> None:
    transport, _ = _transport(tmp_path, [httpx.Response(200)] * 3)
    transport.send("GET", "/payments/organizations/o1/balance/history", headers={"x-api-key": KEY})
    transport.send("GET", "/payments/organizations/o1/balance", headers={"x-api-key": KEY})
    transport.send("GET", "/payments/organizations/o1/balance", headers={"x-api-key": "made-up"})
    tally = accounting.take(record.nodeid)
    assert tally["requests"] == 3 and tally["rate_limited"] == 0
    assert tally["credentials"] == {credential_id(KEY): 2, ANONYMOUS: 1}
    assert tally["routes"] == {"balance_history": {credential_id(KEY): 1}}
    assert KEY not in json.dumps(tally)  # the key itself is never kept
    assert accounting.take(record.nodeid) is None  # taken once


def test_a_429_and_its_retry_after_wait_are_counted(tmp_path, record) -> None:
    limited = httpx.Response(429, headers={"retry-after": "1"})
    transport, slept = _transport(tmp_path, [limited, httpx.Response(200)])
    assert transport.send("GET", "/x", headers={"x-api-key": KEY}).status == 200
    tally = accounting.take(record.nodeid)
    assert (tally["requests"], tally["rate_limited"], tally["retry_waits"], tally["retry_seconds"]) == (2, 1, 1, 1.0)
    assert slept == [1.0]
    # the transport's sleep is faked here: the pacer's hold (what every worker sees) made the resend wait
    assert tally["paced_seconds"] > 0.9


def test_a_credential_the_pacer_exempts_is_marked(tmp_path, record) -> None:
    transport, _ = _transport(tmp_path, [httpx.Response(429)], exempt=[OTHER])
    transport.send("GET", "/x", headers={"x-api-key": OTHER}, retries=0)
    tally = accounting.take(record.nodeid)
    assert tally["exempt"] == [credential_id(OTHER)] and tally["retry_waits"] == 0


def test_outside_a_test_the_phase_counts(tmp_path) -> None:
    transport, _ = _transport(tmp_path, [httpx.Response(200)] * 2)
    with accounting.phase(accounting.PREFLIGHT):
        transport.send("GET", "/x", headers={"x-api-key": KEY})
    transport.send("GET", "/x")
    tallies = accounting.take_all()
    assert tallies[accounting.PREFLIGHT]["requests"] == 1 and tallies[accounting.SESSION]["requests"] == 1


def test_the_preflight_counts_are_handed_to_the_run(monkeypatch) -> None:
    monkeypatch.delenv(accounting.ENV_VAR, raising=False)
    assert accounting.preflight_ended() is None
    before = time.time()
    with accounting.phase(accounting.PREFLIGHT):
        accounting.attempt(KEY)
    accounting.hand_over(accounting.PREFLIGHT)
    assert accounting.handed_over()[accounting.PREFLIGHT]["requests"] == 1
    assert before <= accounting.preflight_ended() <= time.time()  # the rate-limit test waits for it


def test_a_running_test_reads_what_it_sent(record) -> None:
    accounting.attempt(KEY)
    accounting.attempt(None)
    assert accounting.sent(record.nodeid) == 2 and accounting.sent("elsewhere") == 0


def test_operator_calls_are_counted_apart(record) -> None:
    http = httpx.MockTransport(lambda request: httpx.Response(201, json={"orgId": "o2"}))
    op = HttpOperator("http://target.test/_operator", "tok", transport=http)
    op.create_org()
    tally = accounting.take(record.nodeid)
    assert tally["operator"] == 1 and tally["requests"] == 0


def _worker_tallies(nodeid: str, key: str, requests: int, limited: int = 0) -> str:
    """What one worker sends with a test's report: its counts as JSON (the blob crosses processes)."""
    tally = accounting.new_tally()
    tally.update(requests=requests, rate_limited=limited, credentials={credential_id(key): requests})
    return json.dumps(tally)


def test_the_controller_merges_every_worker_and_names_credentials() -> None:
    counts = accounting.RunCounts()
    counts.add("suites/limits/test_rate.py::test_limit", json.loads(_worker_tallies("a", KEY, 10, limited=2)))
    counts.add("suites/conventions/test_ids.py::test_a", json.loads(_worker_tallies("b", POOL_KEY, 5, limited=1)))
    counts.add("suites/conventions/test_ids.py::test_a", json.loads(_worker_tallies("b", POOL_KEY, 2)))
    counts.add("suites/fuzz/test_stateless.py::test_x[GET /a]", json.loads(_worker_tallies("c", OTHER, 7)))
    counts.add_all({accounting.SESSION: json.loads(_worker_tallies("", KEY, 1)),
                    accounting.PREFLIGHT: json.loads(_worker_tallies("", KEY, 4))})
    out = counts.summary({"api_key": KEY, "api_key_pool": [KEY, POOL_KEY]},
                         planned=["suites/limits/test_rate.py::test_limit"])
    assert out["requests"] == 25  # the preflight is counted apart
    assert out["by_phase"] == {"preflight": 4, "suites": 18, "fuzz": 7, "operator": 0}
    assert out["by_part"] == {"conventions": 7, "fuzz": 7, "limits": 10}
    assert out["by_credential"] == {"api_key": 11, "issued": 7, "api_key_pool[1]": 7}
    assert out["issued_keys"] == 1
    assert out["rate_limited"] == {"planned": 2, "unplanned": 1}
    assert counts.requests_of("suites/conventions/test_ids.py::test_a") == 7


def test_the_sending_span_runs_from_the_first_attempt_of_any_worker_to_the_last() -> None:
    counts = accounting.RunCounts()
    for first, last in ((100.0, 130.0), (95.0, 120.0), (None, None)):
        counts.add(f"suites/a/test_{first}.py::t", dict(accounting.new_tally(), requests=1, first=first, last=last))
    assert counts.summary({}, [])["sending_seconds"] == 35.0


def test_part_and_phase_of_a_node_id() -> None:
    assert accounting.part_of("suites/events/test_a.py::test_b[x/y]") == "events"
    assert accounting.part_of("/abs/suites/fuzz/test_s.py::t") == "fuzz"
    assert accounting.phase_of("suites/fuzz/test_s.py::t") == "fuzz"
    assert accounting.phase_of(accounting.SESSION) == "suites"


def test_rate_limit_requirements_come_from_the_catalogs() -> None:
    contract = Contract(
        requirements={"RATE-DEFAULT": {}, "PLINK-RATE-LIMITED": {"quote": "`X`; 429;"},
                      "AUTH-COMMON-429": {"quote": "429 (`RATE_LIMITED` semantics under Limits)"},
                      "VER-CHANGELOG": {"quote": "added responses 401, 403, 429 and 200"}, "IDEM-A": {"quote": "409"}},
        errors={"RATE_LIMITED": {"type": "RATE_LIMITED", "statuses": [429], "requirement": "ERR-RATE-LIMITED"},
                "CONFLICT": {"type": "CONFLICT", "statuses": [409], "requirement": "ERR-CONFLICT"}},
        limits={"rate_limits": [{"name": "default", "requirement": "RATE-DEFAULT"}],
                "retry_after": {"requirement": "RATE-RETRY-AFTER", "also": ["RATE-REFUSED-BEFORE-HANDLER"]}})
    assert accounting.rate_limit_requirements(contract) == {
        "RATE-DEFAULT", "RATE-RETRY-AFTER", "RATE-REFUSED-BEFORE-HANDLER", "ERR-RATE-LIMITED", "PLINK-RATE-LIMITED",
        "AUTH-COMMON-429"}  # a 429 merely listed among other statuses is no rate-limit test


def test_requests_sent_over_a_limit_on_purpose_are_named_apart() -> None:
    """A key's budget is read without the requests the rate-limit tests send over a limit on purpose: the
    summary counts them, per credential label, and the run-cost line says so."""
    counts = accounting.RunCounts()
    tripped = json.loads(_worker_tallies("a", OTHER, 101))
    tripped["exempt"] = [credential_id(OTHER)]
    counts.add("suites/limits/test_rate.py::test_limit", tripped)
    counts.add("suites/conventions/test_ids.py::test_a", json.loads(_worker_tallies("b", KEY, 40)))
    out = counts.summary({"api_key": KEY, "rate_limit_key": OTHER}, planned=[])
    assert out["requests"] == 141
    assert out["over_limit"] == {"requests": 101, "credentials": ["rate_limit_key"]}
    assert accounting.RunCounts().summary({}, [])["over_limit"] == {"requests": 0, "credentials": []}
