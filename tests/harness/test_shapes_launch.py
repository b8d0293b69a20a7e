"""The background launch of the target-shape runs (`tests/conformance/shapes_launch.py`): a shape test reads only
the summary of its own session's launch, and says so when there is none or its runs died."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conformance import shapes_launch
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
    ShapeRuns([ShapeRun("keys", 1, run, 12.5, 3.0)], server_cpu=1.5).dump(out / shapes_launch.SUMMARY)
    _launch(out, "this-session", os.getpid())
    loaded = ShapeRuns.load(shapes_launch.summary(_worker("this-session"), timeout=5))
    assert [(r.shape, r.round, r.wall, r.counts["passed"]) for r in loaded.runs] == [("keys", 1, 12.5, 1)]
    assert "svc_test_secret" not in (out / shapes_launch.SUMMARY).read_text()
