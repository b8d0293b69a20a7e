"""``payconform baseline update`` and ``payconform report diff``: working with finished runs' reports."""

from __future__ import annotations

import argparse
import sys


def cmd_baseline(ns: argparse.Namespace) -> int:
    """Write a baseline of a run's failures and skips, for ``run --baseline``."""
    from .. import baseline as _baseline

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
    """Print what changed verdict between two runs; 1 when anything did."""
    from ..baseline import BaselineError, read_results
    from ..results import diff

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
