"""Selected suite runs forked from a process that has already imported pytest, the plugin and schemathesis.

The kill matrix makes some 490 pytest runs of a few tests each; started from a fresh interpreter, each spent
about half its CPU importing pytest, the payconform plugin and their dependencies. A multiprocessing fork
server imports them once (with ``PYTHONHASHSEED=0``, which every mutant run is given), with what
``forked_warm`` loads, and forks each run from there; the run itself (collection, assertion rewriting of the
suites, the tests) is unchanged, and its output goes to a file as a subprocess' would.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import sys
import tempfile
import threading
from pathlib import Path

PRELOAD = ["pytest", "httpx", "jsonschema", "yaml", "jinja2", "hypothesis", "schemathesis",
           "payconform.plugin", "payconform.plugin.session", "payconform.client", "payconform.report",
           "payconform.fuzz", "tests.conformance.forked_warm"]
_CTX = multiprocessing.get_context("forkserver")
_started = threading.Lock()


def start() -> None:
    """Start the fork server (idempotent). Call it before threads that start other subprocesses run: its
    interpreter is made with ``PYTHONHASHSEED=0`` in the environment for that moment."""
    with _started:
        if multiprocessing.forkserver._forkserver._forkserver_pid is not None:  # type: ignore[attr-defined]
            return
        _CTX.set_forkserver_preload(PRELOAD)
        saved = os.environ.get("PYTHONHASHSEED")
        os.environ["PYTHONHASHSEED"] = "0"
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if saved is None:
                os.environ.pop("PYTHONHASHSEED", None)
            else:
                os.environ["PYTHONHASHSEED"] = saved


def _main(args: list[str], env: dict[str, str], cwd: str, out: str) -> None:
    """The forked child: ``pytest.main(args)`` in ``cwd`` under ``env``, stdout and stderr into ``out``. What the
    fork server imported is frozen out of the garbage collector's reach: pytest collects several times at the
    end of a session, and walking those modules' objects each time cost a fifth of a short run."""
    import gc

    import pytest

    gc.freeze()

    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    code = pytest.main(args)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def run_pytest(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """``python -m pytest ARGS``, forked: its exit code (``-9`` when killed at ``timeout``) and its output."""
    start()
    with tempfile.TemporaryDirectory(prefix="payconform-forked-") as tmp:
        out = str(Path(tmp) / "output.txt")
        proc = _CTX.Process(target=_main, args=(args, env, str(cwd), out), daemon=False)
        proc.start()
        proc.join(timeout)
        if proc.is_alive():
            proc.kill()
            proc.join()
        with contextlib.suppress(FileNotFoundError):
            return int(proc.exitcode if proc.exitcode is not None else -9), Path(out).read_text(
                encoding="utf-8", errors="replace")
        return int(proc.exitcode or -9), ""
