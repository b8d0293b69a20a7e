"""One ``payconform run`` against one hostile mode, measured: wall time, exit code, report, leaks, peak memory.

Shared by ``tests/hostile`` (which asserts how a run ends and its memory bound) and ``benchmarks/hostile.py``
(which prints figures).
Peak memory is the largest resident set of the run's processes (``payconform run``, pytest, its xdist
workers), sampled from each one's ``VmHWM`` while it runs. Not ``wait4``'s ``ru_maxrss``: Linux counts in it the
resident set of the process that forked the child, here a pytest worker of the project's tests that may hold
hundreds of MB the run never used.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from payconform.profile.preflight_step import PREFLIGHT_PROBES
from payconform.results.artifacts import find_leaks
from payconform.transport.breaker import CAUSE

from .server import ORG, OTHER_ORG

SERVER = Path(__file__).with_name("server.py")
# the preflight of a one-key target file: unknown route, api_key, other_org_id, the profile's route probes
PREFLIGHT_REQUESTS = 3 + PREFLIGHT_PROBES


@dataclass
class Outcome:
    mode: str
    seconds: float
    exit_code: int
    report_written: bool
    peak_rss_mb: float
    leaks: list[str] = field(default_factory=list)
    verdicts: dict[str, int] = field(default_factory=dict)
    output: str = ""
    stopped_answering: int = 0  # tests failed with the cause "target stopped answering"


@contextlib.contextmanager
def hostile_server(mode: str, after: int = PREFLIGHT_REQUESTS) -> Iterator[str]:
    """The server of ``mode`` on a free loopback port: its ``http://host:port``."""
    proc = subprocess.Popen([sys.executable, str(SERVER), mode, "--after", str(after)], stdout=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("listening on "):
            raise RuntimeError(f"the hostile server did not start: {line!r}")
        yield line.split()[-1]
    finally:
        proc.kill()
        proc.wait()


def write_target(path: Path, url: str, api_key: str, request_timeout: float) -> Path:
    """A one-key target file for the hostile server, paced loosely (the server has no rate limits)."""
    path.write_text(json.dumps({
        "base_url": f"{url}/business/api/v1", "org_id": ORG, "other_org_id": OTHER_ORG,
        "credentials": {"api_key": api_key}, "operator": {"adapter": "none"},
        "rate_limit": 100000, "ip_rate_limit": 100000, "request_timeout": request_timeout,
    }), encoding="utf-8")
    return path


def _tree(root: int) -> set[int]:
    """``root`` and its live descendants (pytest runs in a session of its own, outside ``root``'s group)."""
    parent: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(entry.path, "stat").read_text()
                parent[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    tree, grew = {root}, True
    while grew:
        found = {pid for pid, ppid in parent.items() if ppid in tree} - tree
        tree |= found
        grew = bool(found)
    return tree


def _tree_peak_kb(root: int) -> int:
    """The largest ``VmHWM`` (kB) among ``root`` and its live descendants."""
    peak = 0
    for pid in _tree(root):
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
    return peak


def _sample_peak(root: int, done: threading.Event, peak: list[int]) -> None:
    """Until ``done``: keep ``peak[0]`` at the largest resident set ``root`` or a descendant reached."""
    while not done.wait(0.05):
        peak[0] = max(peak[0], _tree_peak_kb(root))


def _kill_tree(root: int) -> None:
    """SIGKILL ``root`` and every descendant: a run past its bound leaves nothing behind."""
    for pid in _tree(root):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _run(cmd: list[str], bound: float) -> tuple[int, float, str]:
    """``cmd`` in its own session, killed with its descendants at ``bound`` seconds: exit code, peak MB, output."""
    with open(os.devnull, "rb") as stdin, subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                                                           stderr=subprocess.STDOUT, start_new_session=True) as proc:
        out: list[bytes] = []
        reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else b""))
        reader.start()
        done, peak = threading.Event(), [0]
        sampler = threading.Thread(target=_sample_peak, args=(proc.pid, done, peak))
        sampler.start()
        timer = threading.Timer(bound, _kill_tree, args=(proc.pid,))
        timer.start()
        try:
            proc.wait()
        finally:
            timer.cancel()
            done.set()
            sampler.join()
        reader.join()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.returncode, peak[0] / 1024, b"".join(out).decode("utf-8", "replace")


def run_mode(mode: str, workdir: Path, *, select: str = "conventions", workers: str = "0",
             request_timeout: float = 2.0, bound: float = 300.0, extra: tuple[str, ...] = ()) -> Outcome:
    """``payconform run --select SELECT`` against ``mode``; killed at ``bound`` seconds."""
    api_key = "svc_test_" + secrets.token_hex(16)
    report_dir = workdir / f"report-{mode}"
    with hostile_server(mode) as url:
        target = write_target(workdir / f"target-{mode}.json", url, api_key, request_timeout)
        cmd = [sys.executable, "-m", "payconform.cli", "run", "--target", str(target), "--report-dir",
               str(report_dir), "--select", select, "--workers", workers, *extra]
        started = time.monotonic()
        code, peak, output = _run(cmd, bound)
        seconds = time.monotonic() - started
    results = report_dir / "results.json"
    verdicts: dict[str, int] = {}
    stopped = 0
    if results.exists():
        for test in json.loads(results.read_text(encoding="utf-8")).get("tests") or []:
            verdicts[test["verdict"]] = verdicts.get(test["verdict"], 0) + 1
            stopped += CAUSE in (test.get("message") or "")
    leaks = [f"{leak.path.name}: {leak.kind}" for leak in find_leaks(report_dir, [api_key])] \
        if report_dir.exists() else []
    if api_key in output:
        leaks.append("console output")
    return Outcome(mode, seconds, code, results.exists(), peak, leaks, verdicts, output, stopped)
