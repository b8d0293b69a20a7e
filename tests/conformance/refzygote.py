"""Reference servers forked from one process that has imported the server once.

The kill matrix starts some 490 reference servers. Started as ``python -m payconform.reference``, each
spent about 0.35 s of CPU importing Starlette, uvicorn and the server before serving a few requests. The
zygote (``python -m tests.conformance.refzygote FD``) imports them once and forks each server from there:
the server is unchanged (``payconform.reference.__main__.main`` with the same arguments and environment,
in a session of its own), and its stderr comes back through a pipe as a subprocess' would. The zygote is
single-threaded, so forking it is safe; the kernel reaps its children, and the harness watches and
signals each through a pidfd, which a reused pid cannot fool.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from payconform.refserver import DEFAULT_MODULE, RefServer

ROOT = Path(__file__).resolve().parents[2]
UNKNOWN_EXIT = -1  # the zygote reaps its children, so their exit status never reaches the harness


class ForkedServer:
    """The ``subprocess.Popen`` surface ``RefServer`` uses, for a server forked by the zygote."""

    def __init__(self, pid: int, stderr_fd: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.stderr = os.fdopen(stderr_fd, "r", encoding="utf-8", errors="replace")
        self.returncode: int | None = None
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:  # gone already
            self._pidfd, self.returncode = None, UNKNOWN_EXIT

    def poll(self) -> int | None:
        if self.returncode is None and self._pidfd is not None and select.select([self._pidfd], [], [], 0)[0]:
            self._gone()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            select.select([self._pidfd], [], [], left)
        return int(self.returncode)  # type: ignore[arg-type]

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        if self.poll() is None and self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, sig)
            except ProcessLookupError:
                self._gone()

    def _gone(self) -> None:
        self.returncode = UNKNOWN_EXIT
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class Zygote:
    """The harness' end: one zygote process per harness process, started when first needed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None

    def spawn(self, argv: list[str], env: dict[str, str], args: list[str]) -> ForkedServer:
        """Fork ``python -m payconform.reference ARGV`` under ``env``; its stderr is the returned pipe."""
        read_end, write_end = os.pipe()
        try:
            with self._lock:
                sock = self._running()
                socket.send_fds(sock, [json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()],
                                [write_end])
                reply = sock.recv(256)
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        if not reply:
            os.close(read_end)
            raise OSError("the reference zygote exited")
        return ForkedServer(json.loads(reply)["pid"], read_end, args)

    def _running(self) -> socket.socket:
        if self._proc is None or self._proc.poll() is not None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            # its output goes nowhere: a zygote must not hold the harness' own output open
            self._proc = subprocess.Popen([sys.executable, "-m", "tests.conformance.refzygote", str(theirs.fileno())],
                                          pass_fds=[theirs.fileno()], cwd=ROOT, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            theirs.close()
            self._sock = ours
            atexit.register(self.close)
        assert self._sock is not None
        return self._sock

    def close(self) -> None:
        """End the zygote (the servers it forked are stopped by their ``RefServer``)."""
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
            if self._proc is not None:
                try:
                    self._proc.wait(5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
                self._proc = None


_ZYGOTE = Zygote()


class ForkedRefServer(RefServer):
    """``RefServer`` whose server is forked by the zygote (another module is started as a subprocess)."""

    def _spawn(self, command: list[str], env: dict[str, str]) -> Any:
        if command[1:3] != ["-m", DEFAULT_MODULE]:
            return super()._spawn(command, env)
        return _ZYGOTE.spawn(command[3:], env, command)


def _serve(sock: socket.socket, main: Callable[[list[str]], int]) -> None:
    """The zygote's loop: one request (arguments, environment, a pipe for stderr) -> one forked server. It
    ends when the harness closes its end or is gone (a process the harness forked may hold its end open)."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the servers
    harness = os.getppid()
    while True:
        if not select.select([sock], [], [], 1.0)[0]:
            if os.getppid() != harness:
                return
            continue
        try:
            message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 1)
        except OSError:
            return
        if not message or not fds:
            return  # the harness closed its end
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            _child(sock, fds[0], request, main)
        os.close(fds[0])
        sock.send(json.dumps({"pid": pid}).encode())


def _child(sock: socket.socket, stderr_fd: int, request: dict[str, Any], main: Callable[[list[str]], int]) -> None:
    """A forked server: its own session, stdin and stdout on /dev/null, stderr on the harness' pipe."""
    code = 1
    try:
        sock.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(stderr_fd, 2)
        os.close(null)
        os.close(stderr_fd)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", buffering=1, closefd=False)  # noqa: SIM115
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - whatever happens is the server's stderr, as for a subprocess
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    from payconform.reference.__main__ import main as _reference_main

    _serve(socket.socket(fileno=int(sys.argv[1])), _reference_main)
