"""`payconform receiver --url URL --secret whsec_... [--state-url URL] [--report-dir DIR]`.

`add_parser(subparsers)` registers the subcommand on the main CLI; `run(args)` executes it. The secret may be
given as `env:NAME` so that it stays out of shell history and CI logs.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

from .. import webhooks
from ..cli.exit_codes import ExitCode, UsageParser
from . import runner

HELP = "check a webhook receiver against the Events part of the spec (signatures, timestamps, dedupe, order)"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `receiver` (and its options) on the main parser's subcommands."""
    _options(subparsers.add_parser("receiver", help=HELP, description=HELP))


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", required=True, help="the receiver's delivery URL (POST)")
    parser.add_argument("--secret", required=True,
                        help="the endpoint's signing secret, whsec_..., or env:NAME to read it from a variable")
    parser.add_argument("--state-url", default=None,
                        help="base URL where the receiver shows its conclusions: GET {state-url}/payouts/{id} "
                             '-> {"status": ..., "events": [whk-id, ...]}; without it three checks are skipped')
    parser.add_argument("--report-dir", default=None, help="where to write the report (default reports/receiver-<time>)")
    parser.add_argument("--strict", action="store_true",
                        help="a skipped check fails the run (exit code 1); by default skips are listed with why and "
                             "the run passes when no check failed")


def _secret(value: str) -> str:
    if value.startswith("env:"):
        name = value.removeprefix("env:")
        if name not in os.environ:
            raise ValueError(f"--secret env:{name}: the variable {name} is not set")
        value = os.environ[name]
    try:
        webhooks.expected_signature(value, "probe", "0", b"")
    except webhooks.SignatureError as exc:
        raise ValueError(f"--secret: {exc}") from None
    return value


def _http_url(value: str | None, flag: str) -> None:
    if value is not None and (urlsplit(value).scheme not in ("http", "https") or not urlsplit(value).netloc):
        raise ValueError(f"{flag} must be an http(s) URL with a host")


def run(args: argparse.Namespace) -> int:
    """Run the kit; 0 no check failed (with --strict: none was skipped either), 1 otherwise, 2 unusable input or
    receiver."""
    try:
        secret = _secret(args.secret)
        _http_url(args.url, "--url")
        _http_url(args.state_url, "--state-url")
    except ValueError as exc:
        print(f"payconform receiver: {exc}", file=sys.stderr)
        return ExitCode.CANNOT_TEST
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    report_dir = Path(args.report_dir) if args.report_dir else Path("reports") / f"receiver-{stamp}"
    return runner.run(args.url, secret, args.state_url, report_dir, strict=args.strict)


def main(argv: list[str] | None = None) -> int:
    parser = UsageParser(prog="python -m payconform.receiver", description=HELP)
    _options(parser)
    return run(parser.parse_args(argv))
