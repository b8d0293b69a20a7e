"""``payconform run | serve`` and ``payconform --version``."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from . import __version__, paths
from .target import CREDENTIAL_NAMES, Target, TargetConfigError, option_name

DEFAULT_WORKERS = "2"


def _add_target_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("target", "where to run; every flag overrides the same field of the target file")
    g.add_argument("--target", metavar="FILE", help="target file (YAML or JSON), see docs/architecture.md")
    g.add_argument("--base-url", metavar="URL", help="base URL including /business/api/v1")
    g.add_argument("--org-id", metavar="ID", help="organization id of the api keys")
    g.add_argument("--other-org-id", metavar="ID", help="an organization the api keys cannot access")
    for name in CREDENTIAL_NAMES:
        hint = "comma-separated list of equivalent read+write test keys" if name == "api_key_pool" else name.replace("_", " ")
        g.add_argument(option_name(name), dest=name, metavar="VALUE",
                       help=f"{hint} (env:NAME reads the environment variable NAME)")
    g.add_argument("--operator-url", metavar="URL", help="operator API (http://host:port/_operator)")
    g.add_argument("--operator-token", metavar="TOKEN", help="operator API token (env:NAME allowed)")
    g.add_argument("--rate-limit", type=int, metavar="N", help="requests per minute per credential to stay under")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="payconform",
        description="Contract-conformance test suite for the Payouts, Recipients and Checkout service.",
    )
    parser.add_argument("--version", action="version", version=f"payconform {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run the conformance suites and write a report",
        description="Run the conformance suites against a target (a target file or flags) and write "
                    "results.json, index.html, JUnit XML and allure results into the report directory. "
                    "With neither --target nor --base-url, start the bundled reference server, provision "
                    "it and run against it. Exit code 0 only when no test failed.",
        epilog="Arguments after `--` go to pytest unchanged, e.g. `payconform run -- -k balance -x`.",
    )
    _add_target_flags(run)
    run.add_argument("--report-dir", metavar="DIR", help="report directory (default reports/<UTC timestamp>)")
    run.add_argument("--run-slow", action="store_true", help="also run tests that wait in real time")
    run.add_argument("--select", metavar="EXPR",
                     help="comma-separated requirement id globs (IDEM-*) or part slugs (authentication)")
    run.add_argument("-n", "--workers", metavar="N|auto", default=DEFAULT_WORKERS,
                     help="pytest-xdist workers (default 2; 0 runs in one process)")
    run.add_argument("--mutant", metavar="NAME",
                     help="with the embedded reference server: start it with this mutant")
    run.add_argument("--suites", metavar="DIR", help="suites directory (default: the bundled suites)")
    run.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS", help="extra arguments for pytest")

    serve = sub.add_parser(
        "serve",
        help="start the reference server, provision it and write a target file",
        description="Start the reference sandbox server, create an organization and every credential "
                    "through its operator API, write a target file (mode 0600) and stay up until Ctrl-C.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8123, help="port (default 8123; 0 picks a free one)")
    serve.add_argument("--db", metavar="PATH", help="SQLite database file (default: in memory / temporary)")
    serve.add_argument("--mutant", metavar="NAME", help="start with this mutant (a named deviation)")
    serve.add_argument("--operator-token", metavar="TOKEN", help="operator token (default: random)")
    serve.add_argument("--write-target", metavar="FILE", required=True, help="where to write the target file")
    return parser


def _overrides(ns: argparse.Namespace) -> dict:
    o = {k: getattr(ns, k, None) for k in ("base_url", "org_id", "other_org_id", "operator_url", "operator_token",
                                           "rate_limit")}
    for name in CREDENTIAL_NAMES:
        o[name] = getattr(ns, name, None)
    return {k: v for k, v in o.items() if v is not None}


def _default_report_dir() -> Path:
    return Path("reports") / datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _start_reference(host: str, port: int, db: str | None, mutant: str | None, token: str | None):
    from .operator import HttpOperator
    from .provision import provision
    from .refserver import RefServer

    server = RefServer(host, port, db=db, mutant=mutant, operator_token=token)
    server.start()
    try:
        op = HttpOperator(server.operator_url, server.operator_token)
        try:
            target = provision(op, server.base_url, operator_config={
                "adapter": "reference", "url": server.operator_url, "token": server.operator_token})
        finally:
            op.close()
    except BaseException:
        server.stop()
        raise
    return server, target


def cmd_run(ns: argparse.Namespace, extra: list[str]) -> int:
    overrides = _overrides(ns)
    server = None
    tmpdir = tempfile.mkdtemp(prefix="payconform-run-")
    os.chmod(tmpdir, 0o700)
    target_file = Path(tmpdir) / "target.yaml"
    try:
        if ns.target or ns.base_url:
            try:
                target = Target.load(ns.target, overrides=overrides)
            except TargetConfigError as exc:
                print(f"payconform: {exc}", file=sys.stderr)
                return 2
            if ns.mutant:
                print("payconform: --mutant only applies to the embedded reference server", file=sys.stderr)
                return 2
        else:
            if any(k not in ("rate_limit",) for k in overrides):
                print("payconform: target flags need --target or --base-url", file=sys.stderr)
                return 2
            print("payconform: no target given: starting the reference server", file=sys.stderr)
            try:
                server, target = _start_reference("127.0.0.1", 0, None, ns.mutant, None)
            except Exception as exc:  # noqa: BLE001 - report any startup failure plainly
                print(f"payconform: cannot start the reference server: {exc}", file=sys.stderr)
                return 3
            if "rate_limit" in overrides:
                target.rate_limit = int(overrides["rate_limit"])
            print(f"payconform: reference server at {target.base_url}", file=sys.stderr)
        target.dump(target_file)

        report_dir = Path(ns.report_dir) if ns.report_dir else _default_report_dir()
        report_dir.mkdir(parents=True, exist_ok=True)
        suites = Path(ns.suites) if ns.suites else paths.suites_dir()
        if not suites.is_dir():
            print(f"payconform: no suites directory at {suites}", file=sys.stderr)
            return 3
        cmd = [sys.executable, "-m", "pytest", str(suites), "-p", "payconform.plugin",
               "--target", str(target_file), "--report-dir", str(report_dir),
               f"--junitxml={report_dir / 'junit.xml'}", f"--alluredir={report_dir / 'allure-results'}",
               "-p", "no:cacheprovider", "-p", "no:benchmark", "-rfE"]
        workers = str(ns.workers)
        if workers not in ("0", ""):
            # loadgroup: tests sharing an xdist_group (e.g. the rate_limit_key tests) never run concurrently
            cmd += ["-n", workers, "--dist", "loadgroup"]
        if ns.run_slow:
            cmd.append("--run-slow")
        if ns.select:
            cmd += ["--select", ns.select]
        cmd += extra
        env = dict(os.environ)
        proc = subprocess.Popen(cmd, env=env)
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            code = proc.wait()
        index = report_dir / "index.html"
        if index.exists():
            print(f"payconform: report written to {index.resolve()}")
        else:
            print(f"payconform: no report was written (pytest exit code {code}); see the output above",
                  file=sys.stderr)
        if code == 5:
            print("payconform: no tests were collected or selected (check --select and the suites directory)",
                  file=sys.stderr)
        elif code == 1:
            print("payconform: some conformance tests failed", file=sys.stderr)
        elif code not in (0,):
            print(f"payconform: pytest ended with exit code {code}", file=sys.stderr)
        return code
    finally:
        if server is not None:
            server.stop()
        try:
            target_file.unlink()
        except OSError:
            pass
        try:
            os.rmdir(tmpdir)
        except OSError:
            pass


def cmd_serve(ns: argparse.Namespace) -> int:
    try:
        server, target = _start_reference(ns.host, ns.port, ns.db, ns.mutant, ns.operator_token)
    except Exception as exc:  # noqa: BLE001
        print(f"payconform: cannot start the reference server: {exc}", file=sys.stderr)
        return 3
    stop = threading.Event()

    def handler(signum, frame):  # noqa: ARG001
        stop.set()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        path = target.dump(ns.write_target)
        print(f"reference server at {target.base_url}" + (f" (mutant {ns.mutant})" if ns.mutant else ""))
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
        server.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args:
        i = args.index("--")
        args, extra = args[:i], args[i + 1:]
    parser = build_parser()
    ns = parser.parse_args(args)
    if ns.command == "run":
        extra = list(ns.pytest_args) + extra
        return cmd_run(ns, extra)
    if ns.command == "serve":
        return cmd_serve(ns)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
