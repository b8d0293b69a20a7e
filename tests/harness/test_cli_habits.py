"""`payconform run` as a pytest user expects: -x stops at once, --lf reruns what failed, --co writes nothing, and
Ctrl-C ends the run within seconds whenever it comes."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .fake_project import cli, cli_env, write_project

HABITS = '''
import time

import pytest


@pytest.mark.req("DEMO-FAIL")
def test_fails_soon():
    time.sleep(2)
    assert False, "fails on purpose"


@pytest.mark.req("DEMO-PASS")
def test_takes_long():
    time.sleep(300)
'''
BOTH = "fails_soon or takes_long"
STOP_WITHIN = 60  # seconds: a run that waited for test_takes_long would take 300


@pytest.fixture(scope="module")
def habits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fake project whose two extra tests fail soon and take long, shared by the runs of this module."""
    root = write_project(tmp_path_factory.mktemp("habits"))
    (root / "suites" / "endpoints" / "test_habits.py").write_text(HABITS)
    return root


@pytest.fixture(scope="module")
def stopped_at_first_failure(habits: Path, ref_target) -> tuple[subprocess.CompletedProcess, float]:
    """`-- -x` over a failing test and one that would run five minutes, on two workers; and its wall time."""
    _, path = ref_target
    started = time.monotonic()
    res = cli(habits, "run", "--target", str(path), "-n", "2", "--report-dir", "rx", "--", "-x", "-k", BOTH,
              timeout=240)
    return res, time.monotonic() - started


def test_x_stops_the_run_within_seconds_of_the_first_failure(habits, stopped_at_first_failure) -> None:
    res, wall = stopped_at_first_failure
    assert res.returncode == 1, res.stdout + res.stderr
    assert wall < STOP_WITHIN, wall
    assert "interrupting the tests in flight" in res.stderr and "some conformance tests failed" in res.stderr
    data = json.loads((habits / "rx" / "results.json").read_text())
    verdicts = {t["nodeid"].rsplit("::", 1)[1]: (t["verdict"], t.get("skip_reason")) for t in data["tests"]}
    assert verdicts["test_fails_soon"][0] == "failed"
    assert verdicts["test_takes_long"] == ("not_run", "not run: stopping after 1 failures (-x, --maxfail) while it ran")
    assert data["run"]["ended"] == {"how": "maxfail", "not_run": 1,
                                    "detail": "stopping after 1 failures (-x, --maxfail): 1 tests not run"}
    assert '<property name="payconform_ended" value="maxfail"' in (habits / "rx" / "junit.xml").read_text()
    assert 'id="ended"' in (habits / "rx" / "index.html").read_text()


def test_lf_reruns_only_what_failed_last_time(habits, stopped_at_first_failure, ref_target) -> None:
    """The cache of the -x run above (in the directory it ran from) names its failure: `--lf` runs that alone."""
    _, path = ref_target
    assert (habits / ".payconform_cache").is_dir()
    res = cli(habits, "run", "--target", str(path), "-n", "2", "--report-dir", "rlf", "--", "--lf", "-k", BOTH,
              timeout=240)
    assert res.returncode == 1, res.stdout + res.stderr
    data = json.loads((habits / "rlf" / "results.json").read_text())
    assert [t["nodeid"].rsplit("::", 1)[1] for t in data["tests"]] == ["test_fails_soon"]
    assert data["run"]["ended"]["how"] == "complete"


def test_collect_only_lists_and_writes_nothing(habits, ref_target) -> None:
    _, path = ref_target
    res = cli(habits, "run", "--target", str(path), "--report-dir", "rco", "--select", "DEMO-PASS", "--", "--co",
              "-q")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "suites/endpoints/test_demo.py::test_balance" in res.stdout and "test_balance_created" not in res.stdout
    assert not (habits / "rco").exists() and "preflight" not in res.stderr  # no target contacted
    assert not (habits / ".hypothesis").exists()  # payconform's runs keep Hypothesis's examples in their cache
    plain = subprocess.run([sys.executable, "-m", "pytest", "suites", "-p", "no:randomly", "--target", str(path),
                            "--report-dir", "rpy", "--co", "-q"], cwd=habits, env=cli_env(habits),
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert not (habits / "rpy").exists() and not (habits / "reports").exists()


def _start(habits: Path, *args: str, **env_vars: str) -> subprocess.Popen:
    env = dict(cli_env(habits), PYTHONUNBUFFERED="1", **env_vars)
    return subprocess.Popen([sys.executable, "-m", "payconform.cli", "run", *args], cwd=habits, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _interrupt(proc: subprocess.Popen) -> tuple[str, str, float]:
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=120)
    return out, err, time.monotonic() - sent


def test_ctrl_c_during_the_preflight_ends_the_run_at_once(habits, ref_target) -> None:
    """A target that accepts connections and never answers: the preflight waits on it when Ctrl-C comes."""
    target, _ = ref_target
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        silent.settimeout(120)  # a stop for a hang, on a loaded machine
        proc = _start(habits, "--base-url", f"http://127.0.0.1:{silent.getsockname()[1]}/business/api/v1",
                      "--org-id", target.org_id, "--api-key", "env:PC_HABITS_KEY", "--report-dir", "rpre",
                      PC_HABITS_KEY=target.credentials["api_key"])
        conn, _ = silent.accept()  # the preflight's first request is waiting for an answer
        try:
            out, err, took = _interrupt(proc)
        finally:
            conn.close()
    assert proc.returncode == 130, out + err
    assert took < 15, took
    assert "SIGINT: stopped before the tests started" in err and "Traceback" not in err
    assert not (habits / "rpre").exists()


def test_ctrl_c_as_the_tests_start_ends_the_run_within_seconds(habits, ref_target) -> None:
    _, path = ref_target
    proc = _start(habits, "--target", str(path), "-n", "2", "--report-dir", "rearly", "--", "-k", BOTH)
    assert proc.stdout is not None
    for line in proc.stdout:  # pytest's header: the controller runs and brings up its workers
        if line.startswith("payconform target:"):
            break
    out, err, took = _interrupt(proc)
    assert proc.returncode == 130, out + err
    assert took < 30, took
    assert "the run was interrupted (SIGINT)" in err and "Traceback" not in err
    results = habits / "rearly" / "results.json"
    if results.exists():  # the interrupt came once the tests were collected: the partial report says so
        assert json.loads(results.read_text())["run"]["ended"]["how"] == "interrupted"


def test_ctrl_c_while_a_test_runs_ends_the_run_within_seconds_with_its_report(habits, ref_target) -> None:
    """Ctrl-C while a five-minute test runs: the run ends within seconds (exit 130), and its results.json says
    it was interrupted, the test left not run."""
    _, path = ref_target
    proc = _start(habits, "--target", str(path), "-n", "0", "--report-dir", "rmid", "--", "-k", "takes_long")
    assert proc.stdout is not None
    for line in proc.stdout:  # collection is over: the five-minute test starts next
        if "selected" in line or "collected" in line:
            break
    time.sleep(3)
    out, err, took = _interrupt(proc)
    assert proc.returncode == 130, out + err
    assert took < 30, took
    data = json.loads((habits / "rmid" / "results.json").read_text())
    assert data["run"]["ended"]["how"] == "interrupted"
    assert [t["verdict"] for t in data["tests"] if t["nodeid"].endswith("test_takes_long")] == ["not_run"]


def test_ff_runs_what_failed_last_time_first(habits, stopped_at_first_failure, ref_target) -> None:
    """After the -x run above, `--ff` runs its failure before the other tests."""
    _, path = ref_target
    res = cli(habits, "run", "--target", str(path), "-n", "0", "--report-dir", "rff", "--select", "DEMO-FAIL,DEMO-PASS",
              "--", "--ff", "-k", "fails_soon or test_balance", timeout=240)
    assert res.returncode == 1, res.stdout + res.stderr
    order = re.findall(r'<testcase [^>]*name="([^"]+)"', (habits / "rff" / "junit.xml").read_text())  # as run
    assert order[0] == "test_fails_soon" and len(order) > 1, order
