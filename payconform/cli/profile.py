"""``payconform profile check | suggest``: the merged profile against the target, and the block that fits it.

Both read the target file (and ``--openapi``), merge the profile as a run does (the document's entries over
contract/profile.default.yaml, the target file's ``profile:`` over both) and probe the target within
``probe.MAX_REQUESTS`` requests. Exit codes: ``check`` 0 when everything matches, 1 when something differs,
2 when the target cannot be reached or used; ``suggest`` 0 when it printed the block, 2 likewise.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from ..context import RunContext
from ..contract import deep_merge
from ..profile.check import check
from ..profile.document import DocumentError
from ..profile.findings import MATCHES, Report
from ..profile.probe import MAX_REQUESTS
from ..profile.resolve import default_profile, read_document
from ..profile.suggest import ResultsError, block, render, run_mismatches
from ..target import Target, TargetConfigError, flag_overrides
from .check import CANNOT_TEST

DIFFERENT = 1  # the exit code of a check that found a difference
# Findings a check shows one line each even when they match: values read from the API, not routes.
VALUE_ENTRIES = ("sandbox.", "corridors", "operations.createPayout.body", "operations.sendPayout.body")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _examine(ns: argparse.Namespace):
    """(target, document mapping, merged profile, report), or an exit code when the target is unusable."""
    if not (ns.target or ns.base_url):
        _stderr(f"payconform profile {ns.profile_command}: give --target FILE or --base-url URL")
        return CANNOT_TEST
    try:
        target = Target.load(ns.target, overrides=flag_overrides(lambda name: getattr(ns, name, None)))
    except TargetConfigError as exc:
        _stderr(f"payconform: {exc}")
        return CANNOT_TEST
    sent: list[object] = []
    run = RunContext()
    run.observe(sent.append)
    try:
        mapped = read_document(target, run=run)
    except DocumentError as exc:
        _stderr(f"payconform: {exc}")
        return CANNOT_TEST
    profile = deep_merge(default_profile(), deep_merge(mapped.overrides, target.profile))
    report = check(target, profile, run=run, spent=len(sent))
    report.requests = len(sent)
    if report.fatal:
        _stderr(f"payconform: cannot check the profile against {target.base_url}: {report.fatal}")
        return CANNOT_TEST
    return target, mapped, profile, report


def _print_check(report: Report, source: str) -> None:
    """A few lines: the values read, the routes that answered, then each difference."""
    say = print
    say(f"profile check: {source}")
    routes = Counter(f.entry.rsplit(".", 1)[-1] for f in report.findings
                     if f.status == MATCHES and not f.entry.startswith(VALUE_ENTRIES))
    for f in report.findings:
        if f.status == MATCHES and f.entry.startswith(VALUE_ENTRIES):
            say(f"profile check: {f.line()}")
    if routes:
        say(f"profile check: matches: {routes.get('path', 0)} profile route(s) answer as routes of this API, "
            f"{routes.get('items', 0)} list envelope(s) as the profile reads them")
    for f in report.findings:
        if f.status != MATCHES:
            say(f"profile check: {f.line()}")
    for line in report.untold:
        say(f"profile check: not shown by the target: {line}")
    if report.left_out:
        say(f"profile check: not probed within {MAX_REQUESTS} requests: {', '.join(report.left_out)}")
    say(f"profile check: {report.requests} request(s)")


def cmd_profile(ns: argparse.Namespace) -> int:
    """``payconform profile check`` and ``payconform profile suggest``."""
    examined = _examine(ns)
    if isinstance(examined, int):
        return examined
    target, mapped, profile, report = examined
    if ns.profile_command == "suggest":
        try:
            found = [row for path in ns.results or [] for row in run_mismatches(path)]
        except ResultsError as exc:
            _stderr(f"payconform: {exc}")
            return CANNOT_TEST
        print(render(block(target.profile, mapped, report, found), mapped, report, profile, target.base_url, found),
              end="")
        return 0
    source = (f"{target.base_url} against the default profile"
              + (f", the OpenAPI document {target.openapi}" if target.openapi else "")
              + (", the target file's profile" if target.profile else ""))
    for note in mapped.notes:
        print(f"profile check: document: {note}")
    _print_check(report, source)
    count = len(report.differences)
    if count:
        print(f"payconform: {count} difference(s) between the profile and {target.base_url}: "
              "`payconform profile suggest` prints the override block")
        return DIFFERENT
    print(f"payconform: the profile matches {target.base_url}")
    return 0
