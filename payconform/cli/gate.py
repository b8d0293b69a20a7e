"""The exit code of a finished run: the CI gate (``--baseline``, ``--warnings-as-errors``) or the warning rule."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..target import Target, TargetConfigError
from ..results.verdicts import Verdict
from .exit_codes import ExitCode


def apply_gate(ns: argparse.Namespace, report_dir: Path, target: Target, code: int) -> int:
    """Apply ``--baseline`` / ``--warnings-as-errors`` to the finished run; rewrite its results, report and summary."""
    from ..results import baseline as _baseline
    from ..contract import Contract
    from ..profile.resolve import fold_document
    from ..redact import Redactor
    from ..results.html import write_report
    from ..results.markdown import write_summary
    from ..results.records import write_json

    if code not in (0, 1):
        return code
    try:
        results = _baseline.read_results(report_dir)
        entries = _baseline.load(ns.baseline) if ns.baseline else None
        tier = _baseline.load_tier(ns.baseline) if ns.baseline else None
    except _baseline.BaselineError as exc:
        print(f"payconform: {exc}", file=sys.stderr)
        return ExitCode.CANNOT_TEST
    try:
        fold_document(target)  # the contract the run judged with: the document's entries under the file's profile
    except TargetConfigError as exc:
        print(f"payconform: the gate reads the target file's profile alone: {exc}", file=sys.stderr)
    contract = Contract.load(profile_overrides=target.profile)
    gated = _baseline.apply(results, entries, contract, ns.baseline, warnings_as_errors=ns.warnings_as_errors,
                             tier=tier, strict_profile=bool(ns.strict_profile))
    write_json(report_dir / "results.json", gated)
    write_report(report_dir, gated, contract, Redactor(target.secrets()))
    write_summary(report_dir, gated, Redactor(target.secrets()))
    gate = gated["gate"]
    for f in gate["findings"]:
        print(f"payconform gate: {f['severity']}: {f['kind']}: {f['test']} {f['requirements']}: {f['detail']}",
              file=sys.stderr)
    print(f"payconform: CI gate {'passed' if gate['passed'] else 'failed'}"
          + (f" (baseline {ns.baseline})" if ns.baseline else ""), file=sys.stderr)
    return ExitCode.PASSED if gate["passed"] else ExitCode.FAILED


def forgive_warnings(report_dir: Path, code: int, strict_profile: bool = False) -> int:
    """0 when every failed test only missed approximate timing (a warning, see ``--warnings-as-errors``), and
    with ``strict_profile`` no test met a profile mismatch."""
    from ..results.baseline import BaselineError, read_results

    try:
        tests = read_results(report_dir).get("tests") or []
    except BaselineError:
        return code
    verdicts = {t.get("verdict") for t in tests}
    unforgiven = {Verdict.FAILED.value, Verdict.NOT_RUN.value}
    if strict_profile:
        unforgiven.add(Verdict.PROFILE_MISMATCH.value)
    if unforgiven & verdicts or Verdict.WARNING.value not in verdicts:
        return code
    for t in tests:
        if t.get("verdict") == Verdict.WARNING.value:
            print(f"payconform: warning: approximate timing missed: {t['nodeid']} {t.get('requirements')}",
                  file=sys.stderr)
    return 0
