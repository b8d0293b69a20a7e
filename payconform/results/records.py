"""Per-test records (what a test did) and the run's results (``results.json``).

A ``TestRecord`` is the current test's evidence: its requirement ids, needs, the profile operations it
used, the request ids it saw and its (redacted) transcript. The plugin makes it current for the
duration of a test (``use_record``); ``payconform.client`` and ``payconform.checks.expect`` read it through
``current()``. In the controller, ``ResultCollector`` turns the reports into rows and verdicts.
"""

from __future__ import annotations

import contextvars
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..pacing.tiers import tier as tier_of
from . import mismatch as _mismatch
from .skips import verdict_of
from .unlock import unlock_rows
from .verdicts import Verdict, worst

MAX_TRANSCRIPT_ENTRIES = 200


@dataclass
class TestRecord:
    nodeid: str = ""
    requirements: list[str] = field(default_factory=list)
    # one dict per requirement: id, part, part_title, section, quote (quote/section may be None)
    requirement_info: list[dict] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    profile_ops: list[str] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    transcript: list[dict] = field(default_factory=list)
    dropped_entries: int = 0
    waits: list[str] = field(default_factory=list)  # what the test waits for now, outermost first (payconform.waits)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    __test__ = False  # not a pytest test class

    def add_exchange(self, entry: dict) -> None:
        with self._lock:
            rid = entry.get("request_id")
            if rid and rid not in self.request_ids:
                self.request_ids.append(rid)
            self.transcript.append(entry)
            if len(self.transcript) > MAX_TRANSCRIPT_ENTRIES:
                del self.transcript[0]
                self.dropped_entries += 1

    def wait(self, what: str) -> str:
        """Note a wait in progress; answers the entry to hand ``waited``."""
        with self._lock:
            self.waits.append(what)
            return what

    def waited(self, entry: str) -> None:
        """The wait ``entry`` ended (the latest such, a test's threads may wait alike)."""
        with self._lock:
            for i in range(len(self.waits) - 1, -1, -1):
                if self.waits[i] is entry:
                    del self.waits[i]
                    return

    def use_op(self, op_id: str) -> None:
        with self._lock:
            if op_id not in self.profile_ops:
                self.profile_ops.append(op_id)

    def blob(self, include_transcript: bool) -> dict:
        with self._lock:
            out = {
                "requirements": list(self.requirements),
                "needs": list(self.needs),
                "profile_ops": list(self.profile_ops),
                "request_ids": list(self.request_ids),
            }
            if include_transcript:
                out["transcript"] = list(self.transcript)
                if self.dropped_entries:
                    out["transcript_dropped"] = self.dropped_entries
            return out


_record: contextvars.ContextVar[TestRecord | None] = contextvars.ContextVar("payconform_record", default=None)
# Fallback for threads started by a test (threads do not inherit context variables).
_global_record: TestRecord | None = None


def current() -> TestRecord | None:
    """The record of the running test (or None outside a payconform test)."""
    rec = _record.get()
    return rec if rec is not None else _global_record


def use_record(record: TestRecord | None):
    """Make ``record`` current; returns a token for ``reset_record``."""
    global _global_record
    _global_record = record
    return _record.set(record)


def reset_record(token) -> None:
    global _global_record
    _global_record = None
    try:
        _record.reset(token)
    except ValueError:  # reset from another context: just clear it
        _record.set(None)


# ---------------------------------------------------------------------------------------------
# Controller side: rows and verdicts
# ---------------------------------------------------------------------------------------------


class ResultCollector:
    """Collects one row per test from (possibly remote) test reports."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}

    def add(self, *, nodeid: str, when: str, outcome: str, duration: float, blob: Mapping | None,
            skip_reason: str | None = None, message: str | None = None, wasxfail: bool = False) -> None:
        row = self.rows.get(nodeid)
        if row is None:
            row = self.rows[nodeid] = {
                "nodeid": nodeid,
                "requirements": [],
                "outcome": None,
                "duration": 0.0,
                "skip_reason": None,
                "verdict": None,
                "request_ids": [],
                "profile_ops": [],
                "needs": [],
            }
        row["duration"] = round(row["duration"] + (duration or 0.0), 6)
        if blob:
            for key in ("requirements", "needs", "profile_ops", "request_ids"):
                for v in blob.get(key) or []:
                    if v not in row[key]:
                        row[key].append(v)
            if blob.get("transcript") and outcome == "failed" and "transcript" not in row:
                row["transcript"] = list(blob["transcript"])
        if when == "setup":
            if outcome == "skipped":
                row["outcome"] = "skipped"
                row["skip_reason"] = skip_reason
            elif outcome == "failed":
                row["outcome"] = "error"
                row["message"] = message
        elif when == "call":
            if outcome == "skipped":
                row["outcome"] = "skipped"
                row["skip_reason"] = skip_reason if not wasxfail else f"xfail: {skip_reason or ''}".strip()
            else:
                row["outcome"] = outcome
                if outcome == "failed":
                    row["message"] = message
        elif when == "teardown":
            if outcome == "failed":
                if row["outcome"] in (None, "passed", "skipped"):
                    row["outcome"] = "error"
                    row["message"] = message
        if row["outcome"] == "passed":
            row["verdict"] = Verdict.PASSED.value
        elif row["outcome"] in ("failed", "error"):
            row["verdict"] = Verdict.FAILED.value
        elif row["outcome"] == "skipped":
            verdict = verdict_of(row["skip_reason"])
            row["verdict"] = verdict.value
            if verdict is Verdict.NOT_RUN:
                row["outcome"] = "not_run"
        found = _mismatch.read(row["skip_reason"]) if row["verdict"] == Verdict.PROFILE_MISMATCH.value else None
        if found is not None:
            row["mismatch"] = found.as_dict()
        else:
            row.pop("mismatch", None)

    def not_run(self, nodeid: str, requirements: list[str], needs: list[str], reason: str) -> None:
        """The row of a test the run never started or never finished (interrupted, out of time)."""
        row = self.rows.setdefault(nodeid, {"nodeid": nodeid, "requirements": list(requirements), "duration": 0.0,
                                            "request_ids": [], "profile_ops": [], "needs": list(needs)})
        row.update(outcome="not_run", verdict=Verdict.NOT_RUN.value, skip_reason=reason)
        row.pop("message", None)

    def tests(self) -> list[dict]:
        out = []
        for row in sorted(self.rows.values(), key=lambda r: r["nodeid"]):
            r = dict(row)
            if r["outcome"] is None:  # only a setup report arrived (should not happen) -> error
                r["outcome"], r["verdict"] = "error", Verdict.FAILED.value
            if r["verdict"] != Verdict.FAILED.value:
                r.pop("transcript", None)
                r.pop("message", None)
            out.append(r)
        return out


def _is_observe(contract, rid: str) -> bool:
    info = (contract.requirements.get(rid) if contract is not None else None) or {}
    return str(info.get("level") or "").lower() == "observe"


def apply_levels(contract, tests: Iterable[dict]) -> None:
    """A failed test whose requirements are all approximate (``level: observe``: "about 15 seconds",
    "normally") is a warning, not a failure: the spec promises no exact figure to fail a target on."""
    for t in tests:
        reqs = t.get("requirements") or []
        if t.get("verdict") == Verdict.FAILED.value and t.get("outcome") == "failed" and reqs \
                and all(_is_observe(contract, r) for r in reqs):
            t["verdict"] = Verdict.WARNING.value


def _untested(testable: Any, reason: str | None) -> Verdict:
    """The verdict of a requirement no test checks: not specified (the spec marks it "not shown"), not
    testable (the contract says no API-level test can check it) or not tested."""
    if testable is False or (isinstance(testable, str) and testable.lower() in ("false", "no", "not_specified",
                                                                                 "not_testable")):
        r = f"{testable} {reason or ''}".lower()
        shown = "not shown" in r or "not_specified" in r or "not specified" in r
        return Verdict.NOT_SPECIFIED if shown else Verdict.NOT_TESTABLE
    return Verdict.NOT_TESTED


def requirement_rows(contract, tests: Iterable[Mapping]) -> list[dict]:
    """One row per requirement (catalog order, then ids only seen in tests) with its verdict."""
    by_req: dict[str, list[Mapping]] = {}
    for t in tests:
        for rid in t.get("requirements") or []:
            by_req.setdefault(rid, []).append(t)
    ids = list(contract.requirements) if contract is not None else []
    ids += [r for r in by_req if r not in (contract.requirements if contract is not None else {})]
    rows = []
    for rid in ids:
        info = (contract.requirements.get(rid) if contract is not None else None) or {}
        ts = by_req.get(rid, [])
        verdicts = [t.get("verdict") for t in ts]
        testable = info.get("testable", True)
        reason = info.get("reason")
        verdict = (worst(verdicts) if ts else _untested(testable, reason)).value
        rows.append(
            {
                "id": rid,
                "part": info.get("part"),
                "section": info.get("section"),
                "quote": info.get("quote"),
                "testable": testable,
                "reason": reason,
                "needs": info.get("needs"),
                "tolerates": info.get("tolerates"),
                "level": info.get("level") or "must",
                "verdict": verdict,
                "tests": [t["nodeid"] for t in ts],
                "counts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
            }
        )
    return rows


def build_results(*, run: Mapping[str, Any], tests: list[dict], contract) -> dict:
    apply_levels(contract, tests)
    reqs = requirement_rows(contract, tests)
    out = {"run": dict(run, selected_requirements=sum(1 for r in reqs if r["tests"])), "tests": tests,
           "requirements": reqs, "unlock": unlock_rows(tests, reqs)}
    mismatches = _mismatch.summary(tests)
    if mismatches:
        out["profile_mismatches"] = mismatches
    return out


def totals(results: Mapping) -> dict:
    tests = results.get("tests") or []
    reqs = results.get("requirements") or []
    by_verdict: dict[str, int] = {}
    for t in tests:
        by_verdict[t["verdict"]] = by_verdict.get(t["verdict"], 0) + 1
    req_by: dict[str, int] = {}
    for r in reqs:
        req_by[r["verdict"]] = req_by.get(r["verdict"], 0) + 1
    testable = sum(1 for r in reqs if (v := Verdict.of(r["verdict"])) is None or v.testable)
    covered = sum(1 for r in reqs if (v := Verdict.of(r["verdict"])) is not None and v.covered)
    mismatched = Verdict.PROFILE_MISMATCH.value
    selected = [r for r in reqs if r.get("tests")]
    run = results.get("run") or {}
    return {
        "tests": len(tests),
        "passed": sum(1 for t in tests if t["outcome"] == "passed"),
        "failed": sum(1 for t in tests if t["outcome"] == "failed"),
        "errors": sum(1 for t in tests if t["outcome"] == "error"),
        "skipped": sum(1 for t in tests if t["outcome"] == "skipped" and t["verdict"] != mismatched),
        "profile_mismatches": sum(1 for t in tests if t["verdict"] == mismatched),
        "not_run": sum(1 for t in tests if t["outcome"] == "not_run"),
        "test_verdicts": by_verdict,
        "requirements": len(reqs),
        "covered": covered,
        "testable": testable,
        "coverage_percent": round(100.0 * covered / testable, 1) if testable else 0.0,
        "requirement_verdicts": req_by,
        "selected": len(selected),
        "selected_passed": sum(1 for r in selected if r["verdict"] == Verdict.PASSED.value),
        "partial": bool(run.get("select")) or bool(tier_of(run.get("tier")).marker),
        "overall": overall_verdict(results, by_verdict),
    }


def overall_verdict(results: Mapping, test_verdicts: Mapping[str, int]) -> str:
    """``passed``, ``warning`` or ``failed``: the gate's verdict when a baseline was applied, else
    failed on any test whose verdict fails a gate (a profile mismatch too in a ``strict_profile`` run),
    warning on any approximate-timing miss."""
    gate = results.get("gate")
    if gate:
        return (Verdict.PASSED if gate.get("passed") else Verdict.FAILED).value
    present = [Verdict.of(v) for v, n in test_verdicts.items() if n]
    strict = bool((results.get("run") or {}).get("strict_profile"))
    if any(v is not None and (v.fails_gate or (strict and v.is_mismatch)) for v in present):
        return Verdict.FAILED.value
    return (Verdict.WARNING if Verdict.WARNING in present else Verdict.PASSED).value


def write_json(path: str | Path, data: Any) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return p


def diff(old: Mapping, new: Mapping) -> dict[str, list[dict]]:
    """What changed verdict between two runs: requirements and tests, each ``{id, old, new}`` (``None``
    when absent from one run), in the newer run's order."""
    out: dict[str, list[dict]] = {}
    for key, ident in (("requirements", "id"), ("tests", "nodeid")):
        before = {r[ident]: r.get("verdict") for r in old.get(key) or []}
        after = {r[ident]: r.get("verdict") for r in new.get(key) or []}
        ids = list(after) + [i for i in before if i not in after]
        out[key] = [{"id": i, "old": before.get(i), "new": after.get(i)} for i in ids
                    if before.get(i) != after.get(i)]
    return out
