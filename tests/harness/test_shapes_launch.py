"""The background launch of the target-shape runs (`tests/conformance/shapes_launch.py`): a shape test reads only
the summary of its own session's launch, and says so when there is none or its runs died; the summary of the
reference's webhook deliveries that a failed shape run prints (`tests/conformance/shape_deliveries.py`)."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conformance import shape_deliveries, shapes_launch
from tests.conformance.conftest import SuiteRun
from tests.conformance.shapes import ShapeRun, ShapeRuns


@pytest.fixture
def out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(shapes_launch, "OUT", tmp_path)
    monkeypatch.setattr(shapes_launch, "LAUNCH_WAIT", 0.5)
    return tmp_path


def _worker(token: str) -> SimpleNamespace:
    return SimpleNamespace(workerinput={shapes_launch.TOKEN_KEY: token})


def _launch(out: Path, token: str, pid: int) -> None:
    (out / shapes_launch.LAUNCH).write_text(json.dumps({"token": token, "pid": pid}), encoding="utf-8")


def test_another_sessions_launch_is_never_read(out: Path) -> None:
    _launch(out, "earlier-session", os.getpid())
    (out / shapes_launch.SUMMARY).write_text("{}", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="not launched for this session"):
        shapes_launch.summary(_worker("this-session"), timeout=5)


def test_runs_that_died_without_a_summary_fail_with_their_log(out: Path) -> None:
    _launch(out, "this-session", 2**22 + 12345)  # no such process
    (out / shapes_launch.LOG).write_text("Traceback: the server did not start", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="the server did not start"):
        shapes_launch.summary(_worker("this-session"), timeout=5)


def test_the_summary_of_this_sessions_launch_reads_back(out: Path) -> None:
    report = out / "keys-1"
    report.mkdir()
    (report / "results.json").write_text(json.dumps({"tests": [{"nodeid": "t", "outcome": "passed"}]}))
    run = SuiteRun("keys-1", 0, "output with no secret", report, ["svc_test_secret"], {})
    deliveries = {"keys": {"endpoints": 9, "succeeded on a retry": 0}}
    ShapeRuns([ShapeRun("keys", 1, run, 12.5, 3.0)], server_cpu=1.5, deliveries=deliveries).dump(out / shapes_launch.SUMMARY)
    _launch(out, "this-session", os.getpid())
    loaded = ShapeRuns.load(shapes_launch.summary(_worker("this-session"), timeout=5))
    assert [(r.shape, r.round, r.wall, r.counts["passed"]) for r in loaded.runs] == [("keys", 1, 12.5, 1)]
    assert loaded.deliveries == deliveries
    assert "svc_test_secret" not in (out / shapes_launch.SUMMARY).read_text()


def test_the_delivery_summary_reads_the_reference_database(tmp_path: Path) -> None:
    db = tmp_path / "reference.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.executescript(
            "CREATE TABLE webhook_endpoints (id TEXT, org_id TEXT, url TEXT);"
            "CREATE TABLE events (id TEXT, org_id TEXT);"
            "CREATE TABLE webhook_deliveries (org_id TEXT, status TEXT, attempts INT, last_error TEXT,"
            " created_at TEXT, last_attempt_at TEXT);"
            "INSERT INTO webhook_endpoints VALUES ('we_1', 'org', 'http://127.0.0.1:9/hooks/a'),"
            " ('we_2', 'other', 'https://example.com/hook'), ('we_3', 'other', 'http://localhost:8/hooks/b');"
            "INSERT INTO events VALUES ('evt_1', 'org');"
            "INSERT INTO webhook_deliveries VALUES"
            " ('org', 'succeeded', 1, NULL, '2026-01-01T00:00:00Z', '2026-01-01T00:00:04Z'),"
            " ('org', 'succeeded', 2, NULL, '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z'),"
            " ('org', 'failed', 1, 'connection failed: ConnectError', '2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z');")
        conn.commit()
    got = shape_deliveries.summary(db, {"keys": "org"})["keys"]
    assert got["endpoints"] == 1 and got["events"] == 1
    assert got["deliveries"] == {"succeeded": 2, "failed": 1} and got["succeeded on a retry"] == 1
    assert got["first-attempt lag s"]["max"] == 4.0
    assert got["errors"] == {"connection failed: ConnectError": 1}
    assert shape_deliveries.outside_hosts(db) == ["example.com"]
