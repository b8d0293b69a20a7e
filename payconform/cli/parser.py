"""The command line: every subcommand and flag of ``payconform`` (a user interface: change it knowingly); the
flags of ``run`` and ``check`` come from the option table, ``payconform.options``."""

from __future__ import annotations

import argparse
from typing import Any

from .. import __version__
from ..options import OPTIONS, RUN, TARGET
from ..receiver import cli as receiver_cli
from .exit_codes import UsageParser

DEFAULT_BASELINE = "payconform-baseline.yaml"


def add_options(p: argparse.ArgumentParser, group: str) -> None:
    """The options of ``group`` from the option table (``payconform.options``), the target flags in a group of
    their own; an internal knob works without a line in the help."""
    where = p.add_argument_group("target", "where to run; every flag overrides the same field of the target "
                                           "file") if group == TARGET else p
    for opt in OPTIONS:
        if not opt.in_cli or opt.group != group:
            continue
        kwargs: dict[str, Any] = {"dest": opt.dest, "help": argparse.SUPPRESS if opt.internal else opt.help_text}
        if opt.action == "store":
            kwargs.update(metavar=opt.metavar, type=opt.type, choices=opt.choices)
        else:
            kwargs.update(action=opt.action, **({"const": opt.const} if opt.action == "store_const" else {}))
        where.add_argument(*opt.cli_names, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The ``payconform`` argument parser (arguments after ``--`` are split off before it parses); a bad command
    line exits ``ExitCode.USAGE``."""
    parser = UsageParser(
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
                    "it and run against it. Exit code 0 when no test failed (approximate-timing misses "
                    "are warnings; with --baseline, when the CI gate passes), 1 when one failed, 2 when the target "
                    "cannot be tested, 3 when --max-duration left tests not run and nothing failed, 4 for a bad "
                    "command line, 128+N when signal N ended the run (docs/ci-gate.md).",
        epilog="Arguments after `--` go to pytest unchanged, e.g. `payconform run -- -k balance -x`; `-- --lf` "
               "runs only what failed last time in this directory (`-- --ff`: those first), `-- --co` lists the "
               "tests and writes nothing.",
    )
    add_options(run, TARGET)
    add_options(run, RUN)
    run.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS", help="extra arguments for pytest")

    check = sub.add_parser(
        "check",
        help="preflight: is the target this API and is each credential what the file says",
        description="In a handful of requests: the base URL answers as this API, each configured key is "
                    "valid (or refused as the file says), other_org_id is refused, and the rate-limit headroom. "
                    "Exit code 0 when the target can be tested, 2 with one message when it cannot. "
                    "`payconform run` does the same first.",
    )
    add_options(check, TARGET)

    profile = sub.add_parser("profile", help="check the profile against the target, or suggest the override block")
    psub = profile.add_subparsers(dest="profile_command", metavar="ACTION", required=True)
    pcheck = psub.add_parser(
        "check", help="does the target answer as the profile says where the spec does not show",
        description="Within about 20 requests, read-only (reads, and writes that cannot succeed): probe each "
                    "route the profile chose, read what the API shows (the policy's approval threshold, the "
                    "corridors, the checkout scenario table, the payment reasons) and compare with the merged "
                    "profile (the OpenAPI document's entries over the default, the target file's `profile:` over "
                    "both). Exit code 0 when everything matches, 1 when something differs, 2 when the target "
                    "cannot be reached or used.")
    add_options(pcheck, TARGET)
    psuggest = psub.add_parser(
        "suggest", help="print the override block for the target file's `profile:`",
        description="Print, as YAML for the target file's `profile:`, every entry that could be determined: the "
                    "paths, methods, body field names and list envelopes of the OpenAPI document (--openapi) and "
                    "the values the API shows where they differ from the profile; what could not be determined "
                    "is named in comments. With --results, the overrides a run's profile mismatches named (what "
                    "selects a sandbox scenario, found by trying both ways) join the block. The same requests as "
                    "`profile check`. Exit code 0 when the block was printed, 2 when the target cannot be reached "
                    "or used, or the results cannot be read.")
    add_options(psuggest, TARGET)
    psuggest.add_argument("--results", metavar="PATH", action="append",
                          help="a run's results.json (or its report folder): the overrides its profile mismatches "
                               "named join the block (repeatable: a later run's over an earlier one's)")

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
    serve.add_argument("--choices", choices=("default", "other"),
                       help="the server's choices where the spec does not show: `default` (payconform's profile) "
                            "or `other` (other paths, list envelopes and sandbox rules everywhere; it serves its "
                            "own OpenAPI document at /openapi.json)")
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
    bsub = baseline.add_subparsers(dest="baseline_command", metavar="ACTION", required=True)
    update = bsub.add_parser("update", help="write the baseline from a run's report directory",
                             description="Write one entry per failed or skipped test of a run (keyed by test "
                                         "and requirement ids, with a reason to edit) for `run --baseline`.")
    update.add_argument("--from", dest="source", metavar="REPORT_DIR", required=True,
                        help="report directory of a run (or its results.json)")
    update.add_argument("--out", metavar="FILE", default=DEFAULT_BASELINE,
                        help=f"baseline file to write (default {DEFAULT_BASELINE})")
    update.add_argument("--reason", metavar="TEXT", help="reason for every entry (default: what the run saw)")

    report = sub.add_parser("report", help="work with report directories")
    rsub = report.add_subparsers(dest="report_command", metavar="ACTION", required=True)
    rdiff = rsub.add_parser("diff", help="what changed verdict between two runs",
                            description="Print the requirements and tests whose verdict differs between run A "
                                        "and run B. Exit code 0 when nothing changed, 1 otherwise.")
    rdiff.add_argument("old", metavar="A", help="report directory (or results.json) of the earlier run")
    rdiff.add_argument("new", metavar="B", help="report directory (or results.json) of the later run")
    rmatrix = rsub.add_parser(
        "matrix", help="runs side by side, requirement by requirement, and the spec annotated with their verdicts",
        description="Write a matrix of runs into DIR: index.html (a row per requirement, a column per run, each "
                    "cell linking to the run's report), matrix.json and spec.html (the spec with each requirement's "
                    "quote marked with its verdicts). A folder of report directories stands for each of them, "
                    "oldest first; when every run tested the same target the matrix shows its history. Exit code "
                    "0 when the matrix was written, 2 when a run cannot be read or --names does not name every "
                    "run.")
    rmatrix.add_argument("runs", nargs="+", metavar="RUN_DIR",
                         help="report directory (or results.json) of a run, or a folder of report directories")
    rmatrix.add_argument("--names", metavar="A,B,...", help="comma-separated column names, one per run "
                                                            "(default: the report directories' names)")
    rmatrix.add_argument("--out", metavar="DIR", required=True, help="directory to write the matrix into")
    return parser

