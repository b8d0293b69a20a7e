"""The exit codes of every ``payconform`` command, in one place: scripts and CI systems branch on them, so each
number keeps its meaning (docs/ci-gate.md lists them)."""

from __future__ import annotations

import argparse
import sys
from enum import IntEnum
from typing import NoReturn


class ExitCode(IntEnum):
    """What a command's exit code says. A signal that ended a run is ``128 + N`` (``signalled``), as shells do."""

    PASSED = 0  # every test passed (skips allowed)
    FAILED = 1  # a test failed, the CI gate found something, or a secret leaked into an artifact
    CANNOT_TEST = 2  # the target cannot be tested: preflight, target file unusable, --select matching nothing
    OUT_OF_TIME = 3  # --max-duration left tests not run and nothing failed
    USAGE = 4  # a bad command line (payconform's own or the pytest arguments after --)


SIGNALLED = 128  # 128 + N: signal N ended the run


def signalled(signum: int) -> int:
    """The exit code of a run that signal ``signum`` ended."""
    return SIGNALLED + signum


# pytest's exit codes (pytest.ExitCode, without importing pytest) and what a run answers for each. A run that
# --max-duration or a signal ended is settled before (``payconform.cli.outcome``); pytest interrupted otherwise
# means suite files that could not be collected.
_FROM_PYTEST = {0: ExitCode.PASSED, 1: ExitCode.FAILED, 2: ExitCode.CANNOT_TEST, 3: ExitCode.CANNOT_TEST,
                4: ExitCode.USAGE, 5: ExitCode.CANNOT_TEST}


def from_pytest(code: int) -> int:
    """A pytest run's exit code as ``payconform run``'s: suites that could not be collected, an internal error or
    no test selected is a target that could not be tested, a usage error stays one, a process killed by signal
    N (a negative code) is 128 + N."""
    if code < 0:
        return signalled(-code)
    return int(_FROM_PYTEST.get(code, code))


class UsageParser(argparse.ArgumentParser):
    """An argument parser whose errors exit ``ExitCode.USAGE`` (argparse's own is 2, which means a target that
    cannot be tested here). Its subcommands' parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(ExitCode.USAGE, f"{self.prog}: error: {message}\n")
