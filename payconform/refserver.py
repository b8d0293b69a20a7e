"""Start the reference server as a subprocess (the harness never imports ``payconform.reference``).

    with RefServer(mutant="replay-executes-twice") as ref:
        ref.base_url      # http://127.0.0.1:PORT/business/api/v1
        ref.operator_url  # http://127.0.0.1:PORT/_operator
        ref.operator_token

The server is started with ``--port 0`` (or the given port) and announces itself on stderr with
``payconform reference listening on http://HOST:PORT``; then ``/_operator/health`` must answer 200.
"""

from __future__ import annotations

import collections
import os
import re
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Sequence

import httpx

from . import paths
from .target import API_PREFIX

READY_RE = re.compile(r"payconform reference listening on (https?://[^\s]+)")
DEFAULT_MODULE = "payconform.reference"
TOKEN_ENV = "PAYCONFORM_OPERATOR_TOKEN"  # read by `python -m payconform.reference` (and its --operator-token)


class RefServerError(RuntimeError):
    pass


class RefServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        db: str | Path | None = None,
        mutant: str | None = None,
        choices: str | None = None,
        operator_token: str | None = None,
        startup_timeout: float = 60.0,
        module: str | None = None,
        python: str = sys.executable,
        extra_args: Sequence[str] = (),
        log: IO[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.db = str(db) if db else None
        self.mutant = mutant
        self.choices = choices  # the reference's `--choices` configuration (None: its default)
        self.operator_token = operator_token or secrets.token_urlsafe(24)
        self.startup_timeout = startup_timeout
        # PAYCONFORM_REFERENCE_MODULE runs another implementation with the same command line (tests use a fake)
        self.module = module or os.environ.get("PAYCONFORM_REFERENCE_MODULE") or DEFAULT_MODULE
        self.python = python
        self.extra_args = list(extra_args)
        self.log = log
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.root_url: str | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=60)
        self._ready = threading.Event()
        self._reader: threading.Thread | None = None

    # -- URLs ----------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        self._need_running()
        return self.root_url + API_PREFIX  # type: ignore[operator]

    @property
    def operator_url(self) -> str:
        self._need_running()
        return self.root_url + "/_operator"  # type: ignore[operator]

    def _need_running(self) -> None:
        if self.root_url is None:
            raise RefServerError("the reference server is not running")

    # -- lifecycle -----------------------------------------------------------------------------

    def command(self) -> list[str]:
        # the operator token travels in the environment (TOKEN_ENV), never on the command line that `ps` shows
        cmd = [self.python, "-m", self.module, "--host", self.host, "--port", str(self.port)]
        if self.db:
            cmd += ["--db", self.db]
        if self.mutant:
            cmd += ["--mutant", self.mutant]
        if self.choices:
            cmd += ["--choices", self.choices]
        return cmd + self.extra_args

    def start(self) -> "RefServer":
        if self.proc is not None:
            return self
        env = dict(os.environ if self.env is None else self.env)
        # make the checkout importable even when the package is not installed
        root = paths.PACKAGE_DIR.parent
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[TOKEN_ENV] = self.operator_token
        try:
            self.proc = self._spawn(self.command(), env)
        except OSError as exc:
            raise RefServerError(f"cannot start the reference server: {exc}") from exc
        self._reader = threading.Thread(target=self._read_stderr, name="refserver-stderr", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.startup_timeout
        try:
            while not self._ready.wait(0.05):
                if self.proc.poll() is not None:
                    self._reader.join(1)
                    raise RefServerError(
                        f"the reference server exited with code {self.proc.returncode} before it was ready"
                        + self._tail()
                    )
                if time.monotonic() > deadline:
                    raise RefServerError(
                        f"the reference server did not announce itself within {self.startup_timeout:g}s" + self._tail()
                    )
            while True:
                try:
                    if httpx.get(self.root_url + "/_operator/health", timeout=2, trust_env=False).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if self.proc.poll() is not None:
                    raise RefServerError(f"the reference server exited with code {self.proc.returncode}" + self._tail())
                if time.monotonic() > deadline:
                    raise RefServerError(
                        f"/_operator/health did not answer 200 within {self.startup_timeout:g}s" + self._tail()
                    )
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, command: list[str], env: dict[str, str]) -> subprocess.Popen:
        """The server's process, in a session of its own, its stderr piped to us (the announcement line).
        A subclass may start it another way (the project's tests fork many servers from one process)."""
        return subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env, text=True, encoding="utf-8", errors="replace", start_new_session=True,
        )

    def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr_tail.append(line.rstrip("\n"))
            if self.log is not None:
                try:
                    self.log.write(line)
                    self.log.flush()
                except (ValueError, OSError):
                    pass
            if not self._ready.is_set():
                m = READY_RE.search(line)
                if m:
                    self.root_url = m.group(1).rstrip("/")
                    self._ready.set()

    def _tail(self) -> str:
        tail = "\n".join(list(self._stderr_tail)[-20:])
        return f"; its last output:\n{tail}" if tail else ""

    def stop(self, timeout: float = 5.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        if self._reader is not None:
            self._reader.join(1)
        self.root_url = None
        self._ready.clear()

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> "RefServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
