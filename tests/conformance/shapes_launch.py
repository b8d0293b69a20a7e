"""Start the target-shape runs (`shapes`) in the background as soon as a session has collected their tests.

The runs take minutes of real time: started from the session's main process when the
collection holds `SHAPES_TEST` (under xdist: the first worker's collection), they wait on the sandbox's clocks
while the workers run the other tests, and the shape tests only wait for what is left (`summary`). A run
started for another session is never read: each session has a token, and the shape tests read only the
summary of a launch that carries theirs. `PAYCONFORM_SHAPES=0` leaves them out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "reports" / "project-tests" / "shapes"
SHAPES_TEST = "tests/conformance/test_target_shapes.py"
ENV_VAR = "PAYCONFORM_SHAPES"
LAUNCH = "launch.json"
SUMMARY = "shapes.json"  # `shapes.SUMMARY`: written by `python -m tests.conformance.shapes` at its end
LOG = "shapes.log"
TOKEN_KEY = "payconform_shapes_token"
LAUNCH_WAIT = 300.0  # seconds a worker waits for the launch (the first worker's collection) before it says so

_token = pytest.StashKey[str]()
_proc = pytest.StashKey[subprocess.Popen]()


def enabled() -> bool:
    return os.environ.get(ENV_VAR) != "0"


def configure(config: pytest.Config) -> None:
    """The session's token: set by the main process, handed to each xdist worker (`configure_node`)."""
    if not hasattr(config, "workerinput"):
        config.stash[_token] = uuid.uuid4().hex


def configure_node(node) -> None:
    node.workerinput[TOKEN_KEY] = node.config.stash[_token]


def collected(config: pytest.Config, nodeids: list[str]) -> None:
    """Launch the runs once, when the session's collection holds a shape test."""
    if hasattr(config, "workerinput") or _proc in config.stash or not enabled() or config.option.collectonly:
        return
    if not any(n.startswith(SHAPES_TEST) for n in nodeids):
        return
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / SUMMARY).unlink(missing_ok=True)
    with open(OUT / LOG, "w", encoding="utf-8") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tests.conformance.shapes", "--out", str(OUT)], cwd=ROOT,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    config.stash[_proc] = proc
    (OUT / LAUNCH).write_text(json.dumps({"token": config.stash[_token], "pid": proc.pid}), encoding="utf-8")


def last(items: list[pytest.Item]) -> None:
    """The shape tests at the end of the collection: they hold a worker while they wait for the runs, so they
    are scheduled after everything else (xdist's `loadgroup` hands out multi-test groups first, then single
    tests in collection order; the shape tests are in no group), when little or nothing of the runs is left."""
    items.sort(key=lambda item: item.nodeid.startswith(SHAPES_TEST))


def unconfigure(config: pytest.Config) -> None:
    """An interrupted session stops its runs, the reference server and the runs' workers with them."""
    proc = config.stash.get(_proc, None)
    if proc is not None and proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a child of this process (no xdist) that ended is a zombie until it is reaped
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def summary(config: pytest.Config, timeout: float) -> Path:
    """The summary of this session's runs, once they end; fails saying why when they were not launched or died."""
    token = config.workerinput[TOKEN_KEY] if hasattr(config, "workerinput") else config.stash[_token]
    started, launch = time.monotonic(), None
    while time.monotonic() - started < timeout:
        if launch is None and (OUT / LAUNCH).exists():
            got = json.loads((OUT / LAUNCH).read_text(encoding="utf-8"))
            launch = got if got.get("token") == token else None
        if launch is not None:
            if (OUT / SUMMARY).exists():
                return OUT / SUMMARY
            if not _alive(launch["pid"]) and not (OUT / SUMMARY).exists():
                pytest.fail(f"the target-shape runs ended without a summary; {OUT / LOG}:\n{_tail(OUT / LOG)}")
        elif time.monotonic() - started > LAUNCH_WAIT:
            pytest.fail(f"the target-shape runs were not launched for this session within {LAUNCH_WAIT:.0f} s")
        time.sleep(2)
    pytest.fail(f"the target-shape runs did not end within {timeout:.0f} s; {OUT / LOG}:\n{_tail(OUT / LOG)}")


def _tail(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-3000:] if path.exists() else "(no log)"
