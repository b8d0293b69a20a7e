"""`python -m payconform.reference`: run the reference sandbox server, list its mutants and variants, or write
the record of what they show each requirement's tests to check (`--write-checks contract`).

The operator token comes from `--operator-token` or `PAYCONFORM_OPERATOR_TOKEN`; with neither, one is
generated and written (mode 0600) to `--token-file`, never printed. When the server accepts connections
it prints one line to stderr, `payconform reference listening on http://HOST:PORT`, with the real port
(so `--port 0` works). SIGINT and SIGTERM shut it down cleanly.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import uvicorn

from . import checks_record, mutants
from .choices import CONFIGURATIONS
from .app import build_app
from .core.exchange_log import ExchangeLog
from .core.http_protocol import ErrorBodyH11Protocol
from .reference import API_PREFIX, Config, Reference


class _Server(uvicorn.Server):
    """uvicorn, announcing the real address once its sockets listen, and exiting 0 after a signal.

    uvicorn re-raises a captured SIGINT/SIGTERM once it has shut down gracefully, which would kill the
    process before the database is closed (and print a KeyboardInterrupt traceback); a clean stop is
    what a caller asked for, so the captured signal is forgotten.
    """

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        captured = getattr(self, "_captured_signals", None)
        if isinstance(captured, list):
            captured.clear()

    async def startup(self, sockets: list | None = None) -> None:  # type: ignore[type-arg]
        await super().startup(sockets=sockets)
        if self.started and self.servers:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            print(f"payconform reference listening on http://{host}:{port}", file=sys.stderr, flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m payconform.reference", description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8123, help="0 picks a free port")
    p.add_argument("--db", default=":memory:", help="SQLite file (default: in memory)")
    p.add_argument("--choices", choices=sorted(CONFIGURATIONS), default="default",
                   help="what the deployment chose where the spec does not show (paths, envelopes, sandbox rules):"
                        " `default` (the profile's) or `other`, which chose differently everywhere (its own"
                        " OpenAPI document is served at /openapi.json)")
    p.add_argument("--mutant", action="append", default=[], metavar="NAME",
                   help="apply a mutant or variant (repeatable; or several comma-separated, applied in order)")
    p.add_argument("--operator-token", default=os.environ.get("PAYCONFORM_OPERATOR_TOKEN"))
    p.add_argument("--token-file", type=Path, help="where to write a generated operator token")
    p.add_argument("--rate-limit", type=_positive, metavar="N",
                   help="requests per minute per credential (spec: 100); the balance history and batch submission"
                        " limits scale with it (60 and 30 at 100). Declare the same `rate_limit` in the target file")
    p.add_argument("--ip-rate-limit", type=_positive, metavar="N",
                   help="requests per minute per source IP (spec: 2,000); declare it as `ip_rate_limit`")
    p.add_argument("--exchange-log", type=Path, metavar="FILE",
                   help="append one JSON line per API answer (operationId, method, path, status, content type, body)"
                        " to FILE: the answers as a validating proxy would see them")
    p.add_argument("--list-mutants", action="store_true", help="print name<TAB>reqs<TAB>doc per mutant")
    p.add_argument("--list-variants", action="store_true", help="print name<TAB><TAB>doc per variant")
    p.add_argument("--json", action="store_true", help="with --list-*: one JSON array instead")
    p.add_argument("--write-checks", type=Path, metavar="CONTRACT_DIR",
                   help="write CONTRACT_DIR/catalog/checks.yaml (what each requirement's tests are shown to check,"
                        " by the mutants aimed at it) from CONTRACT_DIR/requirements.yaml and exit")
    return p


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: a limit is at least 1")
    return value


def _list(table: dict[str, mutants.Mutant], as_json: bool) -> None:
    entries = sorted(table.values(), key=lambda m: m.name)
    if as_json:
        print(json.dumps([{"name": m.name, "reqs": list(m.reqs), "doc": m.doc, "kind": m.kind} for m in entries],
                         indent=2))
        return
    for m in entries:
        print(f"{m.name}\t{','.join(m.reqs)}\t{m.doc}")


def _token(args: argparse.Namespace) -> str:
    if args.operator_token:
        return str(args.operator_token)
    if args.token_file is None:
        raise SystemExit("no operator token: pass --operator-token, set PAYCONFORM_OPERATOR_TOKEN, or give"
                         " --token-file to have one generated there")
    token = secrets.token_urlsafe(32)
    args.token_file.touch(mode=0o600)
    args.token_file.chmod(0o600)
    args.token_file.write_text(token + "\n")
    return token


def _attach_token_value(argv: Sequence[str]) -> list[str]:
    """`--operator-token -abc` -> `--operator-token=-abc`: a generated token may start with `-`, which
    argparse would otherwise take for an option."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--operator-token":
            out[i : i + 2] = [f"--operator-token={out[i + 1]}"]
            break
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(_attach_token_value(sys.argv[1:] if argv is None else argv))
    if args.list_mutants or args.list_variants:
        _list(mutants.MUTANTS if args.list_mutants else mutants.VARIANTS, args.json)
        return 0
    if args.write_checks is not None:
        print(f"wrote {checks_record.write(args.write_checks, mutants.MUTANTS.values())}")
        return 0
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    ref = Reference(Config(operator_token=_token(args), db_path=args.db, choices=CONFIGURATIONS[args.choices]))
    ref.ratelimit.scale(args.rate_limit, args.ip_rate_limit)
    try:
        for name in (name for arg in args.mutant for name in arg.split(",") if name):
            mutants.apply(ref, name)
    except mutants.UnknownMutant as exc:
        raise SystemExit(str(exc)) from None
    app = build_app(ref) if args.exchange_log is None else ExchangeLog(build_app(ref), args.exchange_log, API_PREFIX)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                            access_log=False, lifespan="off", http=ErrorBodyH11Protocol)
    try:
        _Server(config).run()
    finally:
        ref.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
