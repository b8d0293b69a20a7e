"""Suite runs and reference servers forked from a process that has already imported what they need.

The kill matrix makes some 490 pytest runs of a few tests each, each against a reference server of its own.
Started from a fresh interpreter, a run spent about half its CPU importing pytest, the payconform plugin and
their dependencies, and a server about 0.35 s importing Starlette, uvicorn and the server. The multiprocessing
fork server (the public ``forkserver`` start method and its preload) imports them once, with ``PYTHONHASHSEED=0``
(which every mutant run is given) and what ``forked_warm`` loads, and forks each run and each server from
there. The run itself (collection, assertion rewriting of the suites, the tests) and the server (its
``main`` with the same arguments and environment) are unchanged; their output goes where a subprocess' would.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any

from payconform.refserver import DEFAULT_MODULE, RefServer

PRELOAD = ["pytest", "httpx", "jsonschema", "yaml", "jinja2", "hypothesis", "schemathesis",
           "payconform.plugin", "payconform.plugin.session", "payconform.client", "payconform.results.html",
           "payconform.fuzz.session", "payconform.reference.__main__", "tests.conformance.forked_warm"]
_CTX = multiprocessing.get_context("forkserver")
_lock = threading.Lock()
_started = False


def _nothing() -> None:
    """The first child of the fork server: starting it starts the server."""


def start() -> None:
    """Start the fork server (idempotent). Call it before threads that start other subprocesses run: its
    interpreter is made with ``PYTHONHASHSEED=0`` in the environment for that moment."""
    global _started
    with _lock:
        if _started:
            return
        _CTX.set_forkserver_preload(PRELOAD)
        saved = os.environ.get("PYTHONHASHSEED")
        os.environ["PYTHONHASHSEED"] = "0"
        try:
            first = _CTX.Process(target=_nothing)
            first.start()
            first.join()
        finally:
            if saved is None:
                os.environ.pop("PYTHONHASHSEED", None)
            else:
                os.environ["PYTHONHASHSEED"] = saved
        _started = True


def _redirect(cwd: str, env: dict[str, str], stdout_fd: int, stderr_fd: int) -> None:
    """A forked child's start: ``cwd``, ``env`` and its standard output and error on the given descriptors, as
    a subprocess started with them would have."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115


def _pytest_main(args: list[str], env: dict[str, str], cwd: str, out: str) -> None:
    """A forked run: ``pytest.main(args)``, stdout and stderr into ``out``. What the fork server imported is
    frozen out of the garbage collector's reach: pytest collects several times at the end of a session, and
    walking those modules' objects each time cost a fifth of a short run."""
    import gc

    import pytest

    gc.freeze()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    _redirect(cwd, env, fd, fd)
    os.close(fd)
    code = pytest.main(args)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def run_pytest(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """``python -m pytest ARGS``, forked: its exit code (``-9`` when killed at ``timeout``) and its output."""
    start()
    with tempfile.TemporaryDirectory(prefix="payconform-forked-") as tmp:
        out = str(Path(tmp) / "output.txt")
        proc = _CTX.Process(target=_pytest_main, args=(args, env, str(cwd), out), daemon=False)
        proc.start()
        proc.join(timeout)
        if proc.is_alive():
            proc.kill()
            proc.join()
        with contextlib.suppress(FileNotFoundError):
            return int(proc.exitcode if proc.exitcode is not None else -9), Path(out).read_text(
                encoding="utf-8", errors="replace")
        return int(proc.exitcode or -9), ""


def _server_main(argv: list[str], env: dict[str, str], cwd: str, stderr: Connection) -> None:
    """A forked reference server: a session of its own, stdout on /dev/null, stderr on the harness' pipe."""
    from payconform.reference.__main__ import main

    os.setsid()
    with open(os.devnull, "w", encoding="utf-8") as null:
        _redirect(cwd, env, null.fileno(), stderr.fileno())
    stderr.close()
    sys.exit(main(argv))


class ForkedServer:
    """The ``subprocess.Popen`` surface ``RefServer`` uses, for a server forked by the fork server."""

    def __init__(self, argv: list[str], env: dict[str, str], args: list[str]) -> None:
        self.args = args
        reader, writer = _CTX.Pipe(duplex=False)
        self._proc = _CTX.Process(target=_server_main, args=(argv, env, os.getcwd(), writer), daemon=True)
        try:
            self._proc.start()
        finally:
            writer.close()
        self.stderr: IO[str] = open(os.dup(reader.fileno()), encoding="utf-8", errors="replace")  # noqa: SIM115
        reader.close()
        self.pid = self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.exitcode

    def poll(self) -> int | None:
        return self._proc.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._proc.join(timeout)
        if self._proc.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._proc.exitcode

    def terminate(self) -> None:
        self._proc.terminate()

    def kill(self) -> None:
        self._proc.kill()


class ForkedRefServer(RefServer):
    """``RefServer`` whose server is forked by the fork server (another module is started as a subprocess)."""

    def _spawn(self, command: list[str], env: dict[str, str]) -> Any:
        if command[1:3] != ["-m", DEFAULT_MODULE]:
            return super()._spawn(command, env)
        start()
        return ForkedServer(command[3:], env, command)
