"""Skip reasons the report reads: what a test needs that the target or the run lacks, "not run", and a
profile mismatch (``payconform.results.mismatch``, whose record its reason is).

A test that cannot run skips with a ``Needs``: ``Needs(Kind.OPERATOR, "cannot issue_key").skip()`` shows the
user "needs operator: cannot issue_key". The report reads the reason back with ``read`` (the verdict,
``needs_operator``, and the capability that would unlock the test, ``operator``). Both directions live here, so
a reworded reason cannot change a verdict unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import NoReturn

import pytest

from ..target import CREDENTIAL_NAMES
from . import mismatch
from .verdicts import Verdict

PREFIX = "needs "
NOT_RUN = "not run"  # the reason of a test the run ended before (``not run: --max-duration reached``)


class Kind(Enum):
    """What a test needs: the word its reason shows after "needs ", its verdict, the capability it names."""

    OPERATOR = ("operator", "operator", Verdict.NEEDS_OPERATOR, "operator")
    CLOCK = ("clock", "clock", Verdict.NEEDS_CLOCK, "clock")
    REAL_TIME = ("real_time", "--run-slow", Verdict.NEEDS_SLOW, "real_time")  # waits of minutes in real time
    MANY_REQUESTS = ("many_requests", "--run-slow or a key pool", Verdict.NEEDS_SLOW, "many_requests")
    SIGNING_KEY = ("signing_key", "signing_key", Verdict.SKIPPED, "signing_key")  # Mode B: both signing fields
    SECOND_ORG = ("second_org", "second_org", Verdict.SKIPPED, "second_org")
    RECEIVER = ("receiver", "receiver", Verdict.SKIPPED, "receiver")  # the target cannot reach the receiver
    PROFILE = ("profile", "profile", Verdict.SKIPPED, None)  # the target did what the spec allows, not the profile
    STATE_URL = ("state_url", "--state-url", Verdict.SKIPPED, None)  # the receiver kit's state endpoint
    CREDENTIAL = ("credential", None, Verdict.SKIPPED, None)  # a credential of the target file: the detail names it
    TARGET = ("target", None, Verdict.SKIPPED, None)  # anything else about the target: the detail says what

    def __new__(cls, key: str, word: str | None, verdict: Verdict, capability: str | None) -> Kind:
        member = object.__new__(cls)
        member._value_ = key
        member.word = word
        member.verdict = verdict
        member.capability = capability
        return member


@dataclass(frozen=True)
class Needs:
    """A skip reason: ``needs <word> (<note>): <detail>``; a credential or target need is ``needs <detail>``."""

    kind: Kind
    detail: str = ""
    note: str = ""

    @property
    def reason(self) -> str:
        """The text the user sees (pytest's skip reason, results.json's ``skip_reason``)."""
        if self.kind.word is None:
            return PREFIX + self.detail
        note = f" ({self.note})" if self.note else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"{PREFIX}{self.kind.word}{note}{detail}"

    @property
    def capability(self) -> str | None:
        """What would let the test run (``payconform.results.unlock`` says where to supply it), or None."""
        return self.detail if self.kind is Kind.CREDENTIAL else self.kind.capability

    def adding(self, text: str) -> Needs:
        """The same need, its detail followed by ``text`` (what the target answered, say)."""
        return replace(self, detail=f"{self.detail} {text}".strip())

    def skip(self) -> NoReturn:
        """Skip the running test for this need."""
        pytest.skip(self.reason)


_WORDED = sorted((k for k in Kind if k.word is not None), key=lambda k: -len(k.word or ""))


def read(reason: str | None) -> Needs | None:
    """The need a skip reason states (the inverse of ``Needs.reason``), or None for another skip."""
    text = (reason or "").strip()
    if not text.startswith(PREFIX):
        return None
    rest = text.removeprefix(PREFIX)
    for kind in _WORDED:
        word = kind.word or ""
        if rest == word or rest.startswith((f"{word}:", f"{word} (")):
            tail, note = rest[len(word):], ""
            if tail.startswith(" (") and ")" in tail:
                note, tail = tail[2:].split(")", 1)
            return Needs(kind, tail.removeprefix(":").strip(), note)
    return Needs(Kind.CREDENTIAL if rest in CREDENTIAL_NAMES else Kind.TARGET, rest)


def verdict_of(reason: str | None) -> Verdict:
    """The verdict of a test skipped with ``reason``."""
    if (reason or "").strip().startswith(NOT_RUN):
        return Verdict.NOT_RUN
    if mismatch.read(reason) is not None:
        return Verdict.PROFILE_MISMATCH
    need = read(reason)
    return need.kind.verdict if need is not None else Verdict.SKIPPED
