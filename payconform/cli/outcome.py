"""The exit code of a finished ``payconform run`` (``exit_codes.ExitCode``): pytest's, the CI gate's or the warning
rule's, out of time when ``--max-duration`` left tests not run and nothing failed, and a leaked secret."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from ..ended import How
from ..results.artifacts import find_leaks
from ..results.markdown import append_step_summary
from ..results.verdicts import Verdict
from ..target import Target
from .exit_codes import SIGNALLED, ExitCode, from_pytest, signalled
from .gate import apply_gate, forgive_warnings
from .pytest_proc import Ended


def _results(report_dir: Path) -> dict:
    from ..results.baseline import BaselineError, read_results

    try:
        return read_results(report_dir)
    except BaselineError:
        return {}


def out_of_time(results: dict, strict_profile: bool = False) -> bool:
    """``--max-duration`` left tests not run and nothing failed: no failed test, no finding of the CI gate, no
    profile mismatch under ``--strict-profile``."""
    ended = (results.get("run") or {}).get("ended") or {}
    if ended.get("how") != How.MAX_DURATION.value:
        return False
    gate = results.get("gate")
    if gate is not None:
        return bool(gate.get("passed"))
    verdicts = {t.get("verdict") for t in results.get("tests") or []}
    return Verdict.FAILED.value not in verdicts and not (strict_profile and results.get("profile_mismatches"))


def _judged(ns: argparse.Namespace, report_dir: Path, target: Target, ended: Ended) -> int:
    """The code of a run that ended by itself or at its hard stop: the gate or the warning rule, then out of
    time."""
    if ended.code not in (0, 1) and not ended.hard_stop:
        return from_pytest(ended.code)
    code = ExitCode.FAILED if ended.hard_stop else ended.code
    if ns.baseline or ns.warnings_as_errors:
        code = apply_gate(ns, report_dir, target, code)
    elif code == ExitCode.FAILED:
        code = forgive_warnings(report_dir, code, ns.strict_profile)
    if code in (ExitCode.PASSED, ExitCode.FAILED) and out_of_time(_results(report_dir), ns.strict_profile):
        return ExitCode.OUT_OF_TIME
    return code


def settle(ns: argparse.Namespace, report_dir: Path, target: Target, ended: Ended) -> int:
    """The run's exit code, with one line saying why, and a warning for each secret found in its files."""
    code = signalled(ended.signum) if ended.signum is not None else _judged(ns, report_dir, target, ended)
    leaks = find_leaks(report_dir, target.secrets()) if report_dir.is_dir() else []
    for leak in leaks:
        print(f"payconform: secret leak: {leak.path} holds {leak.kind}; do not publish this report", file=sys.stderr)
    if leaks and code in (ExitCode.PASSED, ExitCode.OUT_OF_TIME):
        code = ExitCode.FAILED
    if not leaks:  # the job's page gets the summary only when the run's files hold no secret
        append_step_summary(report_dir)
    index = report_dir / "index.html"
    if index.exists():
        print(f"payconform: report written to {index.resolve()}")
    elif ended.code not in (ExitCode.USAGE, 5) and ended.signum is None:
        print(f"payconform: no report was written (pytest exit code {ended.code}); see the output above",
              file=sys.stderr)
    _say(ns, code, ended, index.exists())
    return code


def _say(ns: argparse.Namespace, code: int, ended: Ended, reported: bool) -> None:
    if ended.code == 5 and code == ExitCode.CANNOT_TEST:
        print("payconform: no tests were collected or selected (check --select and the suites directory)",
              file=sys.stderr)
    elif code == ExitCode.FAILED:
        if not (ns.baseline or ns.warnings_as_errors):
            print("payconform: some conformance tests failed"
                  + (" or met a profile mismatch (--strict-profile)" if ns.strict_profile else ""), file=sys.stderr)
    elif code == ExitCode.OUT_OF_TIME:
        print("payconform: --max-duration reached: the report lists the tests not run; none of those that ran "
              "failed", file=sys.stderr)
    elif code > SIGNALLED:
        print(f"payconform: the run was interrupted ({signal.Signals(code - SIGNALLED).name}); "
              + ("the report holds the tests that finished" if reported else "no test had finished: no report"),
              file=sys.stderr)
    elif code == ExitCode.USAGE:
        print("payconform: pytest refused its arguments (see above)", file=sys.stderr)
    elif code != ExitCode.PASSED:
        print(f"payconform: pytest ended with exit code {ended.code}", file=sys.stderr)
