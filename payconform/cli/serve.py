"""``payconform serve``: the reference server, provisioned, with a target file for other runs to use."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import IO, Any

from ..target import Target


def start_reference(host: str, port: int, db: str | None, mutant: str | None,
                    token: str | None, log: IO[str] | None = None, *, rate_limit: int | None = None,
                    ip_rate_limit: int | None = None, choices: str | None = None) -> tuple[Any, Target]:
    """Start the reference server and provision an organization and every credential; stop it on failure.
    ``log`` receives the server's own output (its errors, a traceback behind a 500). ``rate_limit`` and
    ``ip_rate_limit`` replace the spec's limits in the server, and the target file declares them.
    ``choices`` names the server's configuration where the spec does not show (None: its default)."""
    from ..provision import provision_reference
    from ..refserver import RefServer

    server = RefServer(host, port, db=db, mutant=mutant, choices=choices, operator_token=token, log=log,
                       extra_args=limit_args(rate_limit, ip_rate_limit))
    server.start()
    limits = {k: v for k, v in (("rate_limit", rate_limit), ("ip_rate_limit", ip_rate_limit)) if v is not None}
    try:
        target = provision_reference(server, **limits)
    except BaseException:
        server.stop()
        raise
    return server, target


def limit_args(rate_limit: int | None, ip_rate_limit: int | None) -> list[str]:
    """The reference server's options for limits other than the spec's."""
    return [*(["--rate-limit", str(rate_limit)] if rate_limit is not None else []),
            *(["--ip-rate-limit", str(ip_rate_limit)] if ip_rate_limit is not None else [])]


def cmd_serve(ns: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM; 3 when the server cannot start or exits on its own."""
    try:
        server, target = start_reference(ns.host, ns.port, ns.db, ns.mutant, ns.operator_token, log=sys.stderr,
                                         rate_limit=ns.rate_limit, ip_rate_limit=ns.ip_rate_limit,
                                         choices=ns.choices)
    except Exception as exc:  # noqa: BLE001
        print(f"payconform: cannot start the reference server: {exc}", file=sys.stderr)
        return 3
    stop = threading.Event()

    def handler(signum, frame):  # noqa: ARG001
        stop.set()

    old = signal.signal(signal.SIGTERM, handler)
    # A shell script's background job starts with SIGINT ignored, and Python then leaves it ignored: serve
    # must still stop on SIGINT (the way its output says to stop it).
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        path = target.dump(ns.write_target)
        print(f"reference server at {target.base_url}" + (f" (mutant {ns.mutant})" if ns.mutant else "")
              + (f" ({ns.choices} choices; its OpenAPI document: {server.root_url}/openapi.json)"
                 if ns.choices not in (None, "default") else ""))
        print(f"target written to {path}", flush=True)
        print("press Ctrl-C to stop", flush=True)
        while not stop.is_set():
            if not server.running():
                print("payconform: the reference server exited", file=sys.stderr)
                return 3
            stop.wait(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)
        signal.signal(signal.SIGINT, old_int)
        server.stop()
    return 0
