"""``payconform run | serve | baseline update | report diff`` and ``payconform --version``."""

from __future__ import annotations

import argparse
import json
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
DEFAULT_BASELINE = "payconform-baseline.yaml"


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
                    "it and run against it. Exit code 0 only when no test failed (approximate-timing misses "
                    "are warnings); with --baseline, when the CI gate passes.",
        epilog="Arguments after `--` go to pytest unchanged, e.g. `payconform run -- -k balance -x`.",
    )
    _add_target_flags(run)
    run.add_argument("--report-dir", metavar="DIR", help="report directory (default reports/<UTC timestamp>)")
    run.add_argument("--run-slow", action="store_true", help="also run tests that wait in real time")
    run.add_argument("--select", metavar="EXPR",
                     help="comma-separated requirement id globs (IDEM-*) or part slugs (authentication); "
                          "passed to pytest's --select")
    run.add_argument("--fuzz-budget", type=int, metavar="N",
                     help="fuzz phase: generated requests per operation (default 5, about a minute against the "
                          "reference); raise it for a deeper, longer run")
    run.add_argument("--fuzz-max-requests", type=int, metavar="N",
                     help="fuzz phase: at most N requests in all (default 10000; 0: no cap)")
    run.add_argument("--fuzz-seed", type=int, metavar="N",
                     help="fuzz phase: seed of the generated cases (default: a fixed seed, printed in the run's "
                          "header and in every fuzz failure)")
    run.add_argument("--list", action="store_true",
                     help="list the selected requirements and their tests without running anything")
    run.add_argument("--baseline", metavar="FILE",
                     help="CI gate: fail only on a new failure, an expected failure that passes, an unexpected "
                          "skip or a baseline entry that matched nothing (see `payconform baseline update`)")
    run.add_argument("--warnings-as-errors", action="store_true",
                     help="CI gate: a missed approximate-timing requirement fails the run (default: a warning)")
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
    baseline = sub.add_parser("baseline", help="manage the baseline of expected failures and skips (CI gates)")
    bsub = baseline.add_subparsers(dest="baseline_command", metavar="ACTION")
    update = bsub.add_parser("update", help="write the baseline from a run's report directory",
                             description="Write one entry per failed or skipped test of a run (keyed by test "
                                         "and requirement ids, with a reason to edit) for `run --baseline`.")
    update.add_argument("--from", dest="source", metavar="REPORT_DIR", required=True,
                        help="report directory of a run (or its results.json)")
    update.add_argument("--out", metavar="FILE", default=DEFAULT_BASELINE,
                        help=f"baseline file to write (default {DEFAULT_BASELINE})")
    update.add_argument("--reason", metavar="TEXT", help="reason for every entry (default: what the run saw)")

    report = sub.add_parser("report", help="work with report directories")
    rsub = report.add_subparsers(dest="report_command", metavar="ACTION")
    rdiff = rsub.add_parser("diff", help="what changed verdict between two runs",
                            description="Print the requirements and tests whose verdict differs between run A "
                                        "and run B. Exit code 0 when nothing changed, 1 otherwise.")
    rdiff.add_argument("old", metavar="A", help="report directory (or results.json) of the earlier run")
    rdiff.add_argument("new", metavar="B", help="report directory (or results.json) of the later run")
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
    from .provision import provision_reference
    from .refserver import RefServer

    server = RefServer(host, port, db=db, mutant=mutant, operator_token=token)
    server.start()
    try:
        target = provision_reference(server)
    except BaseException:
        server.stop()
        raise
    return server, target


def _suites_dir(ns: argparse.Namespace) -> Path:
    return Path(ns.suites) if ns.suites else paths.suites_dir()


def cmd_list(ns: argparse.Namespace, extra: list[str]) -> int:
    """``run --list``: ``pytest --collect-only`` with the selection applied, grouped by requirement."""
    from .contract import Contract
    from .listing import ENV_VAR

    suites = _suites_dir(ns)
    with tempfile.TemporaryDirectory(prefix="payconform-list-") as tmp:
        out = Path(tmp) / "list.json"
        cmd = [sys.executable, "-m", "pytest", str(suites), "-p", "payconform.plugin", "-p", "payconform.listing",
               "--collect-only", "-q", "--continue-on-collection-errors", "-p", "no:cacheprovider",
               "-p", "no:benchmark"]
        if ns.select:
            cmd += ["--select", ns.select]
        proc = subprocess.run(cmd + extra, env=dict(os.environ, **{ENV_VAR: str(out)}), check=False,
                              capture_output=True, text=True)
        if not out.exists():
            sys.stderr.write(proc.stdout + proc.stderr)
            print(f"payconform: cannot list the tests (pytest exit code {proc.returncode})", file=sys.stderr)
            return proc.returncode or 3
        rows = json.loads(out.read_text(encoding="utf-8"))
    contract = Contract.load()
    by_req: dict[str, list[str]] = {}
    for row in rows:
        for rid in row["requirements"]:
            by_req.setdefault(rid, []).append(row["nodeid"])
    order = [r for r in contract.requirements if r in by_req] + sorted(r for r in by_req if r not in contract.requirements)
    for rid in order:
        info = contract.requirements.get(rid) or {}
        print(f"{rid}  [{info.get('part') or '?'}]  {(info.get('quote') or '').strip()[:100]}")
        for nodeid in by_req[rid]:
            print(f"    {nodeid}")
    print(f"{len(rows)} tests checking {len(order)} requirements "
          f"(of {len(contract.requirements)} in the contract)")
    if proc.returncode not in (0, 5):
        errors = [ln for ln in proc.stdout.splitlines() if ln.startswith("ERROR ")]
        print("payconform: some suite files could not be collected:\n" + "\n".join(errors), file=sys.stderr)
        return 1
    return 0


def _gate(ns: argparse.Namespace, report_dir: Path, target: Target, code: int) -> int:
    """Apply ``--baseline`` / ``--warnings-as-errors`` to the finished run; rewrite its results and report."""
    from . import baseline as _baseline
    from .contract import Contract
    from .redact import Redactor
    from .report import write_report
    from .results import write_json

    if code not in (0, 1):
        return code
    try:
        results = _baseline.read_results(report_dir)
        entries = _baseline.load(ns.baseline) if ns.baseline else None
    except _baseline.BaselineError as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return 3
    contract = Contract.load(profile_overrides=target.profile)
    gated = _baseline.apply(results, entries, contract, ns.baseline, warnings_as_errors=ns.warnings_as_errors)
    write_json(report_dir / "results.json", gated)
    write_report(report_dir, gated, contract, Redactor(target.secrets()))
    gate = gated["gate"]
    for f in gate["findings"]:
        print(f"payconform gate: {f['severity']}: {f['kind']}: {f['test']} {f['requirements']}: {f['detail']}",
              file=sys.stderr)
    print(f"payconform: CI gate {'passed' if gate['passed'] else 'failed'}"
          + (f" (baseline {ns.baseline})" if ns.baseline else ""), file=sys.stderr)
    return 0 if gate["passed"] else 1


def _only_warnings(report_dir: Path, code: int) -> int:
    """0 when every failed test only missed approximate timing (a warning, see ``--warnings-as-errors``)."""
    from .baseline import BaselineError, read_results

    try:
        tests = read_results(report_dir).get("tests") or []
    except BaselineError:
        return code
    verdicts = {t.get("verdict") for t in tests}
    if "failed" in verdicts or "warning" not in verdicts:
        return code
    for t in tests:
        if t.get("verdict") == "warning":
            print(f"payconform: warning: approximate timing missed: {t['nodeid']} {t.get('requirements')}",
                  file=sys.stderr)
    return 0


def cmd_run(ns: argparse.Namespace, extra: list[str]) -> int:
    if ns.list:
        return cmd_list(ns, extra)
    if ns.baseline:
        from .baseline import BaselineError, load

        try:
            load(ns.baseline)
        except BaselineError as exc:
            print(f"payconform: {exc}", file=sys.stderr)
            return 2
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
        suites = _suites_dir(ns)
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
        for flag, value in (("--fuzz-budget", ns.fuzz_budget), ("--fuzz-max-requests", ns.fuzz_max_requests),
                            ("--fuzz-seed", ns.fuzz_seed)):
            if value is not None:
                cmd += [flag, str(value)]
        cmd += extra
        env = dict(os.environ)
        proc = subprocess.Popen(cmd, env=env)
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            code = proc.wait()
        if ns.baseline or ns.warnings_as_errors:
            code = _gate(ns, report_dir, target, code)
        elif code == 1:
            code = _only_warnings(report_dir, code)
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
            if not (ns.baseline or ns.warnings_as_errors):
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
    # A shell script's background job starts with SIGINT ignored, and Python then leaves it ignored: serve
    # must still stop on SIGINT (the way its output says to stop it).
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
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
        signal.signal(signal.SIGINT, old_int)
        server.stop()
    return 0


def cmd_baseline(ns: argparse.Namespace) -> int:
    from . import baseline as _baseline

    if ns.baseline_command != "update":
        print("payconform: usage: payconform baseline update --from REPORT_DIR [--out FILE]", file=sys.stderr)
        return 2
    try:
        entries = _baseline.entries_from_results(_baseline.read_results(ns.source), ns.reason)
    except _baseline.BaselineError as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return 2
    path = _baseline.dump(entries, ns.out)
    fails = sum(1 for e in entries if e.expect == "failed")
    print(f"baseline written to {path}: {fails} expected failures, {len(entries) - fails} expected skips")
    return 0


def cmd_report(ns: argparse.Namespace) -> int:
    from .baseline import BaselineError, read_results
    from .results import diff

    if ns.report_command != "diff":
        print("payconform: usage: payconform report diff A B", file=sys.stderr)
        return 2
    try:
        changes = diff(read_results(ns.old), read_results(ns.new))
    except BaselineError as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return 2
    for key in ("requirements", "tests"):
        print(f"{key}: {len(changes[key])} changed verdict")
        for c in changes[key]:
            print(f"  {c['id']}: {c['old'] or '(absent)'} -> {c['new'] or '(absent)'}")
    return 1 if changes["requirements"] or changes["tests"] else 0


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
    if ns.command == "baseline":
        return cmd_baseline(ns)
    if ns.command == "report":
        return cmd_report(ns)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
