"""What the run's workers share (`suites/_support/runwide.py`): made by exactly one process of the run, read by
the others, never hung by a maker that died, and within the process without a run directory."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from payconform.transport.sender import Exchange, RequestInfo
from suites._support import runwide
from suites._support.leftovers import Leftovers

SCOPE = ("http://127.0.0.1:1", "org_mine", False)
FORK = multiprocessing.get_context("fork")


@pytest.fixture(autouse=True)
def _fresh():
    runwide.use(None)
    yield
    runwide.use(None)


def _make_counted(run_dir: str, log: str, seconds: float, out: str) -> None:
    """One worker: asks for the value, whose make is slow and leaves a line in `log`; writes what it got."""
    runwide.use(run_dir)

    def make() -> dict:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(seconds)
        return {"by": os.getpid(), "made": (1, 2)}

    got = runwide.shared(SCOPE, "value", make)
    Path(out).write_text(repr(got))


def test_one_process_of_the_run_makes_the_value_and_every_other_reads_it(tmp_path: Path) -> None:
    log = tmp_path / "makes.log"
    procs = [FORK.Process(target=_make_counted, args=(str(tmp_path), str(log), 0.5, str(tmp_path / f"out{i}")))
             for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
    assert [p.exitcode for p in procs] == [0] * 4
    assert len(log.read_text().splitlines()) == 1
    answers = {(tmp_path / f"out{i}").read_text() for i in range(4)}
    assert len(answers) == 1 and "[1, 2]" in answers.pop()  # JSON in every process, the maker's too


def test_a_maker_killed_holding_the_lock_leaves_no_stale_lock(tmp_path: Path) -> None:
    log = tmp_path / "makes.log"
    stuck = FORK.Process(target=_make_counted, args=(str(tmp_path), str(log), 60, str(tmp_path / "stuck")))
    stuck.start()
    for _ in range(100):
        if log.exists():
            break
        time.sleep(0.05)
    os.kill(stuck.pid, signal.SIGKILL)
    stuck.join(5)
    runwide.use(tmp_path)
    got = runwide.shared(SCOPE, "value", lambda: {"by": "me"})
    assert got == {"by": "me"}


def test_a_make_that_fails_stores_nothing(tmp_path: Path) -> None:
    runwide.use(tmp_path)

    def broken() -> int:
        raise RuntimeError("setup failed")

    with pytest.raises(RuntimeError):
        runwide.shared(SCOPE, "value", broken)
    assert runwide.shared(SCOPE, "value", lambda: 7) == 7
    assert runwide.shared(SCOPE, "value", lambda: 8) == 7
    assert runwide.shared(SCOPE[:2] + (True,), "value", lambda: 9) == 9  # another scope, another value


def test_a_value_not_enough_for_the_caller_is_made_anew_and_replaces_it(tmp_path: Path) -> None:
    runwide.use(tmp_path)
    assert runwide.shared(SCOPE, "walk", lambda: {"reads": 1}) == {"reads": 1}
    assert runwide.shared(SCOPE, "walk", lambda: {"reads": 3}, lambda v: v["reads"] >= 3) == {"reads": 3}
    runwide.use(tmp_path)  # another worker of the run
    assert runwide.shared(SCOPE, "walk", lambda: {"reads": 1}) == {"reads": 3}


def test_without_a_run_directory_the_value_is_the_process_s() -> None:
    assert runwide.shared(SCOPE, "value", lambda: [1]) == [1]
    assert runwide.shared(SCOPE, "value", lambda: [2]) == [1]
    assert runwide.update(SCOPE, "count", lambda n: (n or 0) + 1) == 1
    assert runwide.update(SCOPE, "count", lambda n: (n or 0) + 1) == 2


def _count(run_dir: str) -> None:
    runwide.use(run_dir)
    for _ in range(25):
        runwide.update(SCOPE, "count", lambda n: (n or 0) + 1)


def test_updates_of_the_run_s_workers_never_lose_one(tmp_path: Path) -> None:
    procs = [FORK.Process(target=_count, args=(str(tmp_path),)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(20)
    runwide.use(tmp_path)
    assert runwide.update(SCOPE, "count", lambda n: n) == 100


def test_an_exchange_is_shared_without_its_credentials() -> None:
    request = RequestInfo("POST", "http://127.0.0.1:1/x", httpx.Headers({"x-api-key": "svc_test_secret",
                                                                           "idempotency-key": "k1"}), b'{"a": 1}')
    ex = Exchange(request, 409, httpx.Headers([("x-request-id", "req_1"), ("set-cookie", "s=1")]), b'{"type": "X"}',
                  0.25, "createCheckoutProduct", truncated=False, reason="Conflict")
    back = runwide.exchange_of(runwide.exchange_json(ex))
    assert (back.status, back.json, back.request_id, back.op_id, back.reason) == (409, {"type": "X"}, "req_1",
                                                                                  "createCheckoutProduct", "Conflict")
    assert back.request.json == {"a": 1} and back.request.headers.get("idempotency-key") == "k1"
    assert "x-api-key" not in back.request.headers and "set-cookie" not in back.headers
    assert "svc_test_secret" not in str(runwide.exchange_json(ex))


def test_rows_made_for_the_run_are_left_to_the_controller(tmp_path: Path) -> None:
    def created(rid: str):
        request = SimpleNamespace(url="http://127.0.0.1:1/recipients/org_mine?x=1", json={}, method="POST")
        return SimpleNamespace(op_id="createBeneficiary", status=201, json={"id": rid}, request=request)

    worker, controller = Leftovers(), Leftovers()
    worker.note(created("rcp_own"))
    runwide.shared(SCOPE, "recipient", lambda: worker.note(created("rcp_shared")) or "rcp_shared")
    worker.hand_over(tmp_path)
    assert set(worker.rows) == {("recipient", "rcp_own")}
    controller.take_over(tmp_path)
    assert set(controller.rows) == {("recipient", "rcp_shared")}


def test_values_wanted_together_are_made_by_one_make_and_only_the_missing_ones(tmp_path: Path) -> None:
    """`shared_together`: what no worker made is made in one call (the walks side by side); a value already made,
    and enough, is read, never made again; one no longer enough is made anew with what is missing."""
    runwide.use(tmp_path)
    calls: list[list[str]] = []

    def make(names: list[str]) -> dict:
        calls.append(names)
        return {name: {"reads": 3 if name == "b" else 1} for name in names}

    first = runwide.shared_together(SCOPE, {"a": lambda v: True, "b": lambda v: True}, make)
    assert first == {"a": {"reads": 1}, "b": {"reads": 3}} and calls == [["a", "b"]]
    runwide.use(tmp_path)  # another worker of the run: reads what the first made
    again = runwide.shared_together(SCOPE, {"a": lambda v: True, "b": lambda v: True, "c": lambda v: True}, make)
    assert again["a"] == first["a"] and calls == [["a", "b"], ["c"]]
    more = runwide.shared_together(SCOPE, {"a": lambda v: v["reads"] >= 3, "b": lambda v: v["reads"] >= 3}, make)
    assert calls[-1] == ["a"] and more["b"] == {"reads": 3}
