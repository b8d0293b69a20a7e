"""The pytest process of ``payconform run``: its own process group, so that an interrupt reaches it and all its
xdist workers at once, and a bounded end, so that a run always ends within seconds of being told to."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..ended import OWN_GROUP_VAR

STOP_WAIT = 30.0  # seconds an interrupted run gets to write its report before it is killed


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived while ``payconform run`` itself worked (the preflight, the reference's start).
    Like ``KeyboardInterrupt``, no ``except Exception`` on the way swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def stoppable() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``Stopped`` inside, so the run cleans up (its temporary target file, the reference
    server) and answers 128 + N (``exit_codes.signalled``) instead of a traceback or an abrupt end."""
    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class Ended:
    """How the pytest process ended: its exit code, the signal that stopped it, whether the hard stop did."""

    code: int
    signum: int | None = None
    hard_stop: bool = False


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def run_pytest(cmd: list[str], stop_after: float | None = None, env: dict[str, str] | None = None) -> Ended:
    """pytest in its own process group. SIGINT or SIGTERM (Ctrl-C, CI runners, `timeout`) reaches it and its
    workers as one interrupt: the tests stop, the partial report is written, nothing is left running; a second
    signal, or ``STOP_WAIT`` seconds, kills the group. Still running ``stop_after`` seconds on (the tests in
    flight at ``--max-duration`` did not end), it is interrupted the same way (``Ended.hard_stop``)."""
    proc = subprocess.Popen(cmd, env=dict(os.environ if env is None else env, **{OWN_GROUP_VAR: "1"}),
                            start_new_session=True)
    received: list[int] = []
    interrupted_at: list[float] = []

    def forward(signum: int, frame: object) -> None:
        received.append(signum)
        interrupted_at.append(time.monotonic())
        _signal_group(proc.pid, signal.SIGINT if len(received) == 1 else signal.SIGKILL)
        if len(received) == 1:
            print(f"payconform: {signal.Signals(signum).name}: stopping the run and writing the partial report "
                  "(send it again to stop at once)", file=sys.stderr)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    hard_stop_at = None if stop_after is None else time.monotonic() + stop_after
    hard_stop = False
    try:
        while proc.poll() is None:
            time.sleep(0.2)
            now = time.monotonic()
            if interrupted_at and now - interrupted_at[0] > STOP_WAIT:
                print(f"payconform: the run did not stop within {STOP_WAIT:.0f} s of the interrupt: killing it",
                      file=sys.stderr)
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait()
            elif not interrupted_at and hard_stop_at is not None and now >= hard_stop_at:
                hard_stop = True
                interrupted_at.append(now)
                print("payconform: --max-duration reached with tests still running: stopping them and writing "
                      "the report", file=sys.stderr)
                _signal_group(proc.pid, signal.SIGINT)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _signal_group(proc.pid, signal.SIGKILL)  # workers that outlived their controller
    return Ended(proc.returncode, received[0] if received else None, hard_stop)
