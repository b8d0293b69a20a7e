"""The verdicts of a run: the one vocabulary of results.json, the terminal summary, the HTML report and the CI gate.

A verdict's value is the string results.json and the baseline hold, which users script against; its label,
colours and rank are how the report shows it, and its flags say how it counts (coverage, the gate). The
members are listed worst first: a requirement takes the worst verdict of its tests, and the report orders its
bars and filters the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class Group(Enum):
    """What kind of result a verdict is."""

    FAILURE = "failure"  # the target did not do what the spec says (a test's finding)
    PASS = "pass"
    NOT_RUN = "not_run"  # the run ended before the test did
    MISMATCH = "mismatch"  # the target chose otherwise than the profile, where the spec does not show the choice
    SKIP = "skip"  # the test could not run against this target or with this run's options
    UNTESTED = "untested"  # a requirement no test checks


@dataclass(frozen=True)
class Look:
    """The report's colours: a badge's background and text, and a verdict bar's segment."""

    badge: str
    text: str
    bar: str


@dataclass(frozen=True)
class _Meaning:
    label: str
    look: Look
    group: Group
    covered: bool = False  # counts as a covered requirement
    fails_gate: bool = False  # fails a run (and its CI gate) unless the baseline expects it
    testable: bool = True  # counts among the testable requirements
    chosen_by_run: bool = False  # a skip the run chose (its options), not the deployment


_NEEDS_LOOK = ("#fff3cd", "#7a5b00")
_UNTESTABLE_LOOK = ("#e7e3f6", "#4b3c8c")


class Verdict(Enum):
    """Every verdict a test or a requirement of results.json can have, worst first."""

    FAILED = ("failed", _Meaning("failed", Look("#fde0e0", "#a4161a", "#d62828"), Group.FAILURE, fails_gate=True))
    WARNING = ("warning", _Meaning("warning (approximate timing)", Look("#ffe8cc", "#8a4b00", "#f77f00"),
                                   Group.FAILURE))
    EXPECTED_FAILURE = ("expected_failure", _Meaning("expected failure", Look("#f1e0f5", "#6a1b7a", "#b5179e"),
                                                     Group.FAILURE))
    NOT_RUN = ("not_run", _Meaning("not run", Look("#e2e8f0", "#1e293b", "#64748b"), Group.NOT_RUN))
    PROFILE_MISMATCH = ("profile_mismatch", _Meaning("profile mismatch", Look("#dbeafe", "#1e3a8a", "#3b82f6"),
                                                     Group.MISMATCH))
    PASSED = ("passed", _Meaning("passed", Look("#d8f3dc", "#1b5e20", "#52b788"), Group.PASS, covered=True))
    NEEDS_OPERATOR = ("needs_operator", _Meaning("needs operator", Look(*_NEEDS_LOOK, "#ffd166"), Group.SKIP))
    NEEDS_CLOCK = ("needs_clock", _Meaning("needs clock", Look(*_NEEDS_LOOK, "#e9c46a"), Group.SKIP))
    NEEDS_SLOW = ("needs_slow", _Meaning("needs --run-slow", Look(*_NEEDS_LOOK, "#f4e285"), Group.SKIP,
                                         chosen_by_run=True))
    SKIPPED = ("skipped", _Meaning("skipped", Look("#eceff3", "#4a535d", "#adb5bd"), Group.SKIP))
    NOT_TESTED = ("not_tested", _Meaning("not tested", Look("#eceff3", "#4a535d", "#dee2e6"), Group.UNTESTED))
    NOT_TESTABLE = ("not_testable", _Meaning("not testable", Look(*_UNTESTABLE_LOOK, "#9d8fd6"), Group.UNTESTED,
                                             testable=False))
    NOT_SPECIFIED = ("not_specified", _Meaning("not specified by the spec", Look(*_UNTESTABLE_LOOK, "#c7bff0"),
                                               Group.UNTESTED, testable=False))

    def __new__(cls, value: str, meaning: _Meaning) -> Verdict:
        member = object.__new__(cls)
        member._value_ = value
        member.meaning = meaning
        return member

    @property
    def label(self) -> str:
        return self.meaning.label

    @property
    def look(self) -> Look:
        return self.meaning.look

    @property
    def group(self) -> Group:
        return self.meaning.group

    @property
    def rank(self) -> int:
        """0 for the worst verdict; a requirement's verdict is its tests' lowest rank."""
        return _RANKS[self]

    @property
    def covered(self) -> bool:
        return self.meaning.covered

    @property
    def fails_gate(self) -> bool:
        return self.meaning.fails_gate

    @property
    def testable(self) -> bool:
        return self.meaning.testable

    @property
    def chosen_by_run(self) -> bool:
        return self.meaning.chosen_by_run

    @property
    def is_failure(self) -> bool:
        """A finding against the target (failed, a warning, an expected failure): shown with its message."""
        return self.group is Group.FAILURE

    @property
    def is_skip(self) -> bool:
        return self.group is Group.SKIP

    @property
    def is_mismatch(self) -> bool:
        """The target chose otherwise than the profile: neither a finding nor a skip, and no failed run unless
        ``--strict-profile``."""
        return self.group is Group.MISMATCH

    @property
    def for_tests(self) -> bool:
        """Whether a test (not only a requirement) can have this verdict."""
        return self.group is not Group.UNTESTED

    @classmethod
    def of(cls, value: str | None) -> Verdict | None:
        """The verdict a results.json value names, or None for a value outside the vocabulary."""
        try:
            return cls(value)
        except ValueError:
            return None


_RANKS = {v: i for i, v in enumerate(Verdict)}
TEST_VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict if v.for_tests)
REQUIREMENT_VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
SKIP_VERDICTS: frozenset[str] = frozenset(v.value for v in Verdict if v.is_skip)
FAILURE_VERDICTS: frozenset[str] = frozenset(v.value for v in Verdict if v.is_failure)


def worst(values: Iterable[str | None]) -> Verdict:
    """A requirement's verdict from its tests' verdicts: the worst of them (``skipped`` when none is known)."""
    known = [v for v in map(Verdict.of, values) if v is not None]
    return min(known, key=lambda v: v.rank, default=Verdict.SKIPPED)
