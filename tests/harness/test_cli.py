import json
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from payconform import __version__
from payconform.target import Target

from .fake_project import cli, cli_env

STOP_TIMEOUT = 120  # a stop for a hang: the reference gets 5 s to stop before it is killed; a loaded machine is slow


def test_version_and_help(workdir):
    res = cli(workdir, "--version")
    assert res.returncode == 0 and res.stdout.strip() == f"payconform {__version__}"
    res = cli(workdir, "run", "--help")
    assert res.returncode == 0 and "--select" in res.stdout and "--report-dir" in res.stdout
    assert "--mutant" not in res.stdout and "--suites" not in res.stdout  # developer knobs, not in the user help
    res = cli(workdir, "serve", "--help")
    assert res.returncode == 0 and "--write-target" in res.stdout


def test_bad_target(workdir):
    (workdir / "bad.yaml").write_text("base_url: http://h/nope\norg_id: ck1\n")
    res = cli(workdir, "run", "--target", "bad.yaml")
    assert res.returncode == 2
    assert "must end with the fixed prefix /business/api/v1" in res.stderr


def test_embedded_run_writes_the_report(workdir):
    res = cli(workdir, "run", "--report-dir", "rep", "-n", "0", "--", "-k", "not test_fresh_org")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "starting the reference server" in res.stderr
    assert "requirements covered:" in res.stdout
    assert f"report written to {workdir / 'rep' / 'index.html'}" in res.stdout
    for name in ("results.json", "index.html", "junit.xml", "allure-results"):
        assert (workdir / "rep" / name).exists(), name
    assert "svc_test_" not in (workdir / "rep" / "junit.xml").read_text().replace("svc_test_****", "")


def test_select_passing_and_nothing(workdir, ref_target):
    _, path = ref_target
    res = cli(workdir, "run", "--target", str(path), "--select", "DEMO-PASS", "-n", "2", "--report-dir", "r1")
    assert res.returncode == 0, res.stdout + res.stderr
    res = cli(workdir, "run", "--target", str(path), "--select", "NOPE-*", "-n", "0", "--report-dir", "r2")
    assert res.returncode == 2
    assert "no tests were collected or selected" in res.stderr
    assert not (workdir / "r2").exists()  # no empty report folder


def test_flags_without_target_file(workdir, ref_target):
    target, _ = ref_target
    res = cli(workdir, "run", "--base-url", target.base_url, "--org-id", target.org_id, "--api-key", "env:PC_K",
              "-n", "0", "--report-dir", "r3", "--", "-k", "test_balance and not created")
    assert res.returncode == 2 and "PC_K is not set" in res.stderr  # a missing env var is a clear error


def test_serve_writes_target_and_stops(workdir):
    out = workdir / "t.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "payconform.cli", "serve", "--port", "0", "--write-target",
                             str(out)], cwd=workdir, env={**cli_env(workdir), "PYTHONFAULTHANDLER": "1"},
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120  # a stop for a hang, on a loaded machine
        lines = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if line.startswith("target written to"):
                break
        assert f"target written to {out}\n" in lines, lines
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        target = Target.load(out)
        assert len(target.pool) == 12 and target.operator_config["adapter"] == "reference"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            state = _signal_state(proc.pid)
            proc.send_signal(signal.SIGABRT)  # faulthandler (PYTHONFAULTHANDLER) prints where every thread is
            try:
                _, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            pytest.fail(f"serve did not stop within {STOP_TIMEOUT} s of Ctrl-C ({state}); its stderr:\n{err[-6000:]}")
    assert proc.returncode == 0, err[-3000:]


def _signal_state(pid: int) -> str:
    """The state and signal lines of /proc/PID/status (blocked, ignored, caught signals)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "no /proc status"
    return "; ".join(line for line in lines if line.startswith(("SigBlk", "SigIgn", "SigCgt", "State")))


def test_check_passes_a_testable_target(workdir, ref_target):
    _, path = ref_target
    res = cli(workdir, "check", "--target", str(path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "preflight: base URL answers as this API" in res.stderr and "can be tested" in res.stdout


@pytest.mark.parametrize("case", ["dead port", "unknown key", "no credential"])
def test_a_run_that_cannot_test_the_target_exits_2_in_seconds(workdir, ref_target, case):
    target, _ = ref_target
    base_url = target.base_url
    args = ["--api-key", f"svc_test_{'0' * 32}_{'A' * 43}"]
    if case == "dead port":
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/business/api/v1"
        sock.close()
    elif case == "no credential":
        args = []
    res = cli(workdir, "run", "--base-url", base_url, "--org-id", target.org_id, *args, "-n", "0",
              "--report-dir", "r-broken")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "payconform: cannot test this target:" in res.stderr
    assert {"dead port": "does not answer", "unknown key": "UNAUTHORIZED",
            "no credential": "no credential"}[case] in res.stderr
    # "in seconds": the preflight's few requests, each by its deadline (tests/harness/test_preflight.py)
    requests = {"dead port": 1, "unknown key": 2, "no credential": 0}[case]
    assert f"preflight: {requests} request(s)" in res.stderr, res.stderr


SLOW_TEST = '''
import time

import pytest


@pytest.mark.req("DEMO-PASS")
def test_takes_long():
    time.sleep(60)
'''


def test_sigterm_ends_the_run_with_a_report_and_nothing_left(workdir, ref_target):
    """CI runners and `timeout` send SIGTERM: the run stops, writes what it has, and leaves nothing behind."""
    _, path = ref_target
    (workdir / "suites" / "endpoints" / "test_slow_demo.py").write_text(SLOW_TEST)
    proc = subprocess.Popen([sys.executable, "-m", "payconform.cli", "run", "--target", str(path), "-n", "2",
                             "--report-dir", "rt"], cwd=workdir, env=cli_env(workdir), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180  # a stop for a hang, on a loaded machine
    while not list((workdir / "rt").glob("allure-results/*")) and time.monotonic() < deadline:
        time.sleep(0.2)  # the first results exist: pytest and its workers run
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=STOP_TIMEOUT)
    assert proc.returncode == 128 + signal.SIGTERM, out + err
    assert "the run was interrupted (SIGTERM)" in err
    assert (workdir / "rt" / "results.json").exists() and (workdir / "rt" / "index.html").exists()
    ended = json.loads((workdir / "rt" / "results.json").read_text())["run"]["ended"]
    assert ended["how"] == "interrupted" and ended["not_run"] >= 1, ended
    leftover = subprocess.run(["pgrep", "-f", str(workdir / "suites")], capture_output=True, text=True).stdout
    assert not leftover.strip(), f"processes of the run still alive: {leftover}"
    assert "Traceback" not in err
