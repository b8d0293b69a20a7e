"""``payconform check``: the preflight on its own, and the same preflight at the start of ``payconform run``."""

from __future__ import annotations

import argparse
import sys

from ..pacing import accounting
from ..preflight import preflight, print_preflight
from ..profile.resolve import fold_document
from ..context import RunContext
from ..target import Target, TargetConfigError, flag_overrides
from .exit_codes import ExitCode

CANNOT_TEST = ExitCode.CANNOT_TEST  # the target is not testable as described


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def preflight_blocks(target: Target, run: RunContext | None = None) -> bool:
    """Run the preflight (through ``run``: its pacer), print what it saw; True when the run must stop (exit
    ``CANNOT_TEST``). Its request counts go to the run that follows (``accounting.hand_over``)."""
    with accounting.phase(accounting.PREFLIGHT):
        result = preflight(target, run=run)
    accounting.hand_over(accounting.PREFLIGHT)
    print_preflight(result, _stderr)
    return not result.ok


def cmd_check(ns: argparse.Namespace) -> int:
    """Load the target from the file and flags, run the preflight: 0 when it can be tested, else 2."""
    if not (ns.target or ns.base_url):
        _stderr("payconform check: give --target FILE or --base-url URL")
        return CANNOT_TEST
    try:
        target = Target.load(ns.target, overrides=flag_overrides(lambda name: getattr(ns, name, None)))
        notes = fold_document(target)  # a document given with --openapi must be readable, as a run needs it
    except TargetConfigError as exc:
        _stderr(f"payconform: {exc}")
        return CANNOT_TEST
    for note in notes:
        _stderr(f"payconform: openapi: {note}")
    if preflight_blocks(target):
        return CANNOT_TEST
    print(f"payconform: {target.base_url} can be tested")
    return 0
