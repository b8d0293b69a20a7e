"""``payconform baseline update``, ``payconform report diff`` and ``report matrix``: working with finished runs'
reports."""

from __future__ import annotations

import argparse
import sys


def cmd_baseline(ns: argparse.Namespace) -> int:
    """Write a baseline of a run's failures and skips, for ``run --baseline``."""
    from ..results import baseline as _baseline

    if ns.baseline_command != "update":
        print("payconform: usage: payconform baseline update --from REPORT_DIR [--out FILE]", file=sys.stderr)
        return 2
    try:
        results = _baseline.read_results(ns.source)
        entries = _baseline.entries_from_results(results, ns.reason)
    except _baseline.BaselineError as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return 2
    tier = _baseline.run_tier(results)
    path = _baseline.dump(entries, ns.out, tier=tier)
    fails = sum(1 for e in entries if e.expect == "failed")
    print(f"baseline written to {path} (tier {tier}): {fails} expected failures, "
          f"{len(entries) - fails} expected skips")
    return 0


def cmd_report(ns: argparse.Namespace) -> int:
    """``report diff`` or ``report matrix``."""
    if ns.report_command == "matrix":
        return _matrix(ns)
    if ns.report_command != "diff":
        print("payconform: usage: payconform report diff A B | payconform report matrix RUN_DIR... --out DIR",
              file=sys.stderr)
        return 2
    return _diff(ns)


def _matrix(ns: argparse.Namespace) -> int:
    """Write the matrix of runs and the spec annotated with their verdicts."""
    from ..contract import Contract
    from ..results import matrix

    names = [n.strip() for n in ns.names.split(",")] if ns.names else None
    try:
        runs = matrix.load_runs(ns.runs, names)
    except (matrix.MatrixError, OSError) as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return 2
    data, written = matrix.write(ns.out, runs, Contract.load())
    differ = sum(1 for r in data["requirements"] if r["differs"])
    print(f"matrix of {len(runs)} runs and {len(data['requirements'])} requirements ({differ} differ between "
          f"columns) written to {written['html']}")
    return 0


def _diff(ns: argparse.Namespace) -> int:
    """Print what changed verdict between two runs; 1 when anything did."""
    from ..results.baseline import BaselineError, read_results, run_tier
    from ..results.records import diff

    try:
        old, new = read_results(ns.old), read_results(ns.new)
    except BaselineError as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return 2
    if run_tier(old) != run_tier(new):
        print(f"runs of different tiers (A: {run_tier(old)}, B: {run_tier(new)}): comparing only the tests both "
              "ran and the requirements they check")
        old, new = _common(old, new), _common(new, old)
    changes = diff(old, new)
    for key in ("requirements", "tests"):
        print(f"{key}: {len(changes[key])} changed verdict")
        for c in changes[key]:
            print(f"  {c['id']}: {c['old'] or '(absent)'} -> {c['new'] or '(absent)'}")
    return 1 if changes["requirements"] or changes["tests"] else 0


def _common(results: dict, other: dict) -> dict:
    """``results`` narrowed to the tests ``other`` ran too, with the verdicts of the requirements those tests
    check judged on them alone (a test only the larger tier ran changes no requirement's verdict)."""
    from ..contract import run_contract
    from ..results.records import requirement_rows

    ran = {t["nodeid"] for t in other.get("tests") or []}
    tests = [t for t in results.get("tests") or [] if t["nodeid"] in ran]
    checked = {r for t in tests for r in t.get("requirements") or []}
    rows = requirement_rows(run_contract(), tests)
    return {**results, "tests": tests, "requirements": [r for r in rows if r.get("id") in checked]}
