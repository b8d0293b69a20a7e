"""The command line: every subcommand and flag of ``payconform`` (a user interface: change it knowingly)."""

from __future__ import annotations

import argparse

from .. import __version__
from ..receiver import cli as receiver_cli
from ..target import CREDENTIAL_NAMES, option_name
from ..tiers import TIERS

DEFAULT_WORKERS = "2"
# A pool's run is held by the per-source-IP ceiling, not one key: tests that wait (on the spec's clocks, on the
# window of the one key they send 100 requests with) hold a worker meanwhile, so it needs more workers than
# cores to keep the ceiling busy (measured, embedded full: sending 180 s with 2, 126 s with 4; floor 113 s).
POOL_WORKERS = "4"
# The smoke tier without an operator clock is its real-time waits (a bank return, a chargeback, deliveries),
# each holding a worker: with 4 its waits queued behind each other (measured, one-key smoke: wall 140 s, 1.26 x
# its floor), with 6 they overlap (112 s, 0.99) and 8 adds nothing (113 s). Waiting workers cost no CPU.
REAL_TIME_SMOKE_WORKERS = "6"
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
    g.add_argument("--webhook-listen", metavar="HOST:PORT",
                   help="address the webhook receiver listens on (webhooks.listen; default 127.0.0.1:0)")
    g.add_argument("--webhook-public-url", metavar="URL",
                   help="URL the target can reach the webhook receiver at (webhooks.public_url): a tunnel or a "
                        "host address; see README, a receiver the target can reach")


def build_parser() -> argparse.ArgumentParser:
    """The ``payconform`` argument parser (arguments after ``--`` are split off before it parses)."""
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
    run.add_argument("--keep-created", action="store_true",
                     help="leave the recipients, draft links and products the run created (saves their cleanup"
                          " requests; by default the run removes what the API allows)")
    run.add_argument("--select", metavar="EXPR",
                     help="comma-separated requirement id globs (IDEM-*), part slugs (authentication) or test name "
                          "globs (test_links_walk); passed to pytest's --select")
    run.add_argument("--fuzz-budget", type=int, metavar="N",
                     help="fuzz phase: generated requests per operation (default 5, about a minute against the "
                          "reference); raise it for a deeper, longer run")
    run.add_argument("--no-fuzz", dest="fuzz_budget", action="store_const", const=0,
                     help="no fuzz phase (the same as --fuzz-budget 0)")
    run.add_argument("--fuzz-max-requests", type=int, metavar="N",
                     help="fuzz phase: at most N requests in all, split evenly over its operations (default: what "
                          "the tier's request budget, or its aimed floor at the keys' rate, leaves after the suites "
                          "with the keys at hand - for full, 100 with one key, 420 with 12 keys, 1753 with 20 or "
                          "more; 0: no cap)")
    run.add_argument("--tier", choices=list(TIERS),
                     help="smoke: the tests marked smoke, which touch every part and every catalog row in at most "
                          "300 requests (the pull-request gate); full: every test in about 1,500 requests per key "
                          "(default); deep: full with "
                          "--run-slow and a larger fuzz phase")
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
    run.add_argument("-n", "--workers", metavar="N|auto", default=None,
                     help=f"pytest-xdist workers (default {DEFAULT_WORKERS}, {POOL_WORKERS} with a key pool, in the "
                          f"smoke tier or without an operator, {REAL_TIME_SMOKE_WORKERS} in the smoke tier without an "
                          "operator; 0 runs in one process)")
    run.add_argument("--max-duration", type=float, metavar="SECONDS", default=None,
                     help="end the run after SECONDS (0: no limit; default: twice the least time the target's rate "
                          "limits allow for the tier's request budget with the keys at hand, plus 10 minutes, and 15 "
                          "more without an operator): tests not started by then are reported not run, the report is "
                          "written, exit code 1")
    run.add_argument("--mutant", metavar="NAME",
                     help="with the embedded reference server: start it with this mutant")
    run.add_argument("--suites", metavar="DIR", help="suites directory (default: the bundled suites)")
    run.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS", help="extra arguments for pytest")

    check = sub.add_parser(
        "check",
        help="preflight: is the target this API and is each credential what the file says",
        description="In a handful of requests: the base URL answers as this API, each configured key is "
                    "valid (or refused as the file says), other_org_id is refused, and the rate-limit headroom. "
                    "Exit code 0 when the target can be tested, 2 with one message when it cannot. "
                    "`payconform run` does the same first.",
    )
    _add_target_flags(check)

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
    serve.add_argument("--rate-limit", type=int, metavar="N",
                       help="a faster sandbox: N requests per minute per credential instead of the spec's 100 (the "
                            "per-route limits scale with it); the target file declares it, and the rate-limit "
                            "tests judge the server by it")
    serve.add_argument("--ip-rate-limit", type=int, metavar="N",
                       help="N requests per minute per source IP instead of the spec's 2,000 (declared likewise)")
    receiver_cli.add_parser(sub)
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

