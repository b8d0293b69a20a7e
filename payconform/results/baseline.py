"""The CI gate: a baseline of expected failures and expected skips, and the check of a run against it.

A deployment that cannot do something yet still gates on regressions: the baseline lists what is known to
fail or to be skipped, keyed by test and requirement, each with a reason. As in the OpenID conformance
suite's expected-failure files, a run fails on a new failure, on an expected failure that now passes
(remove it: the fix must not be hidden), on an unexpected skip (skips hide fixes, test262's lesson), and
on an entry that matched nothing (a renamed test must not leave a stale exemption behind). Misses of
approximate-timing requirements (``level: observe``) are warnings, errors only with
``warnings_as_errors``; a profile mismatch the baseline does not expect is a warning, an error only with
``strict_profile``, and one it expects that now runs is an error like an expected skip that runs.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .records import build_results
from ..pacing.tiers import DEFAULT_TIER
from .verdicts import Verdict

# an entry's `expect`: `failed` stands for every failure verdict (warnings too), `skipped` for every skip verdict
EXPECT_FAILED, EXPECT_SKIPPED = Verdict.FAILED.value, Verdict.SKIPPED.value
EXPECT_MISMATCH = Verdict.PROFILE_MISMATCH.value
EXPECTS = (EXPECT_FAILED, EXPECT_SKIPPED, EXPECT_MISMATCH)
BASELINE_VERSION = 1
HEADER = """\
# payconform baseline: expected failures and expected skips of one deployment, for CI gates.
# Written by `payconform baseline update --from REPORT_DIR`; edit the reasons, keep it under version control.
# `payconform run --baseline FILE` fails on a new failure, on an expected failure that now passes, on an
# unexpected skip, and on an entry that matched no test of the run.
#   test          pytest node id (* and ? are wildcards)
#   requirements  requirement ids the entry is about (the test's ids; empty = any)
#   expect        failed | skipped | profile_mismatch
#   reason        why (a ticket, a limitation of the deployment)
# `tier` is the tier of the run it was written from (--tier): a run of another tier is gated only on the
# tests it ran, and says so.
"""


class BaselineError(ValueError):
    """The baseline file cannot be read."""


@dataclass
class Entry:
    test: str
    expect: str
    reason: str
    requirements: list[str] = field(default_factory=list)

    def matches(self, row: Mapping[str, Any]) -> bool:
        # `*` and `?` are wildcards; `[` is literal, as in parametrized node ids (test_x[0001])
        if not fnmatch.fnmatchcase(row["nodeid"], self.test.replace("[", "[[]")):
            return False
        return not self.requirements or bool(set(self.requirements) & set(row.get("requirements") or []))

    def as_dict(self) -> dict:
        return {"test": self.test, "requirements": list(self.requirements), "expect": self.expect,
                "reason": self.reason}


@dataclass
class Finding:
    kind: str
    severity: str
    detail: str
    test: str | None = None
    requirements: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "severity": self.severity, "test": self.test,
                "requirements": list(self.requirements), "detail": self.detail}


def load(path: str | Path) -> list[Entry]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc}") from None
    entries = []
    for i, raw in enumerate(data.get("expected") or []):
        if not isinstance(raw, dict) or not raw.get("test") or raw.get("expect") not in EXPECTS:
            raise BaselineError(f"{path}: entry {i + 1} needs `test` and `expect: {'|'.join(EXPECTS)}`")
        if not str(raw.get("reason") or "").strip():
            raise BaselineError(f"{path}: entry {i + 1} ({raw['test']}) needs a `reason`")
        entries.append(Entry(test=str(raw["test"]), expect=raw["expect"], reason=str(raw["reason"]).strip(),
                             requirements=[str(r) for r in raw.get("requirements") or []]))
    return entries


def _failure_reason(row: Mapping[str, Any]) -> str:
    lines = [ln.strip() for ln in (row.get("message") or "").splitlines() if ln.strip()]
    expected = next((ln for ln in lines if ln.lower().startswith("expected:")), "")
    seen = next((ln for ln in lines if ln.lower().startswith("target answered:")), "")
    text = "; ".join(p for p in (expected, seen) if p) or next((ln for ln in lines if not ln.startswith("[")), "")
    text = re.sub(r"https?://[^/\s]+", "", text)  # the target's host says nothing about why
    return f"fails: {text[:240]}" if text else "fails"


def entries_from_results(results: Mapping[str, Any], reason: str | None = None) -> list[Entry]:
    """One entry per failed, skipped or mismatched test of a run (skips for lack of --run-slow are a choice
    of the run, not of the deployment, and are left out)."""
    out = []
    for row in results.get("tests") or []:
        verdict = Verdict.of(row.get("verdict"))
        if verdict is None:
            continue
        if verdict.is_failure:
            out.append(Entry(row["nodeid"], EXPECT_FAILED, reason or _failure_reason(row),
                             list(row.get("requirements") or [])))
        elif verdict.is_mismatch:
            first = (row.get("skip_reason") or verdict.label).splitlines()[0]
            out.append(Entry(row["nodeid"], EXPECT_MISMATCH, reason or first, list(row.get("requirements") or [])))
        elif verdict.is_skip and not verdict.chosen_by_run:
            out.append(Entry(row["nodeid"], EXPECT_SKIPPED, reason or (row.get("skip_reason") or "skipped"),
                             list(row.get("requirements") or [])))
    return out


def run_tier(results: Mapping[str, Any]) -> str:
    """The tier of a run's results (runs before tiers existed ran every test: ``full``)."""
    return str((results.get("run") or {}).get("tier") or DEFAULT_TIER)


def load_tier(path: str | Path) -> str:
    """The tier a baseline was written for (``full`` for a baseline older than tiers)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc}") from None
    return str(data.get("tier") or DEFAULT_TIER)


def dump(entries: Iterable[Entry], path: str | Path, tier: str = DEFAULT_TIER) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    body = yaml.safe_dump({"version": BASELINE_VERSION, "tier": tier, "expected": [e.as_dict() for e in entries]},
                          sort_keys=False, allow_unicode=True, width=120)
    p.write_text(HEADER + body, encoding="utf-8")
    return p


def _in_selection(entry: Entry, results: Mapping[str, Any], contract) -> bool:
    select = (results.get("run") or {}).get("select") or []
    if not select:
        return True
    dirs = entry.test.split("::", 1)[0].split("/")[:-1]
    extra = [dirs[dirs.index("suites") + 1]] if "suites" in dirs[:-1] else []
    return contract.matches(entry.requirements, select, extra_parts=extra)


def check(results: Mapping[str, Any], entries: list[Entry] | None, contract, *,
          warnings_as_errors: bool = False, tier: str | None = None, strict_profile: bool = False) -> list[Finding]:
    """The gate's findings for one run (see the module docstring); marks matched test rows in place:
    a failure the baseline expects gets the verdict ``expected_failure`` and its ``baseline_reason``.
    Without a baseline (``None``) only failures and warnings count: skips are the target's business.
    A baseline of another ``tier`` than the run's judges the tests the run ran; its other entries are not
    stale, only out of the run's tier (one warning says so)."""
    gate_skips = entries is not None
    entries = entries or []
    other_tier = tier is not None and tier != run_tier(results)
    run_slow = bool((results.get("run") or {}).get("run_slow"))
    used: set[int] = set()
    findings: list[Finding] = []
    for row in results.get("tests") or []:
        reqs = list(row.get("requirements") or [])
        verdict = Verdict.of(row.get("verdict"))
        matching = [(i, e) for i, e in enumerate(entries) if e.matches(row)]
        used.update(i for i, _ in matching)
        fail_entry = next((e for _, e in matching if e.expect == EXPECT_FAILED), None)
        skip_entry = next((e for _, e in matching if e.expect == EXPECT_SKIPPED), None)
        mismatch_entry = next((e for _, e in matching if e.expect == EXPECT_MISMATCH), None)
        if verdict in (Verdict.FAILED, Verdict.EXPECTED_FAILURE):
            if fail_entry is None:
                findings.append(Finding("new_failure", "error", "failed and not in the baseline", row["nodeid"], reqs))
            else:
                row["verdict"], row["baseline_reason"] = Verdict.EXPECTED_FAILURE.value, fail_entry.reason
        elif verdict is Verdict.WARNING:
            if fail_entry is not None:
                row["baseline_reason"] = fail_entry.reason
            else:
                findings.append(Finding("warning", "error" if warnings_as_errors else "warning",
                                        "approximate-timing requirement missed", row["nodeid"], reqs))
        elif verdict is Verdict.PASSED:
            if fail_entry is not None:
                findings.append(Finding("expected_failure_passed", "error",
                                        f"passes now: remove it from the baseline (reason was: {fail_entry.reason})",
                                        row["nodeid"], reqs))
            for kind, entry in (("expected_skip_ran", skip_entry), ("expected_mismatch_ran", mismatch_entry)):
                if entry is not None:
                    findings.append(Finding(kind, "error",
                                            f"ran now: remove it from the baseline (reason was: {entry.reason})",
                                            row["nodeid"], reqs))
        elif verdict is Verdict.PROFILE_MISMATCH:
            if mismatch_entry is not None:
                row["baseline_reason"] = mismatch_entry.reason
            elif strict_profile or gate_skips:
                first = (row.get("skip_reason") or verdict.value).splitlines()[0]
                findings.append(Finding("unexpected_mismatch", "error" if strict_profile else "warning", first,
                                        row["nodeid"], reqs))
        elif verdict is not None and verdict.is_skip:
            if skip_entry is not None:
                row["baseline_reason"] = skip_entry.reason
            elif gate_skips and not (verdict.chosen_by_run and not run_slow):
                findings.append(Finding("unexpected_skip", "error",
                                        f"skipped: {row.get('skip_reason') or verdict.value}", row["nodeid"], reqs))
    if other_tier and entries:
        findings.append(Finding("tier_mismatch", "warning",
                                f"baseline of tier {tier}, run of tier {run_tier(results)}: only the tests this run "
                                "ran were gated; entries for the others were not checked"))
    for i, e in enumerate(entries):
        if i not in used and not other_tier and _in_selection(e, results, contract):
            findings.append(Finding("unmatched_entry", "error",
                                    f"baseline entry ({e.expect}: {e.reason}) matched no test of this run",
                                    e.test, e.requirements))
    return findings


def apply(results: dict, entries: list[Entry] | None, contract, baseline_name: str | None, *,
          warnings_as_errors: bool = False, tier: str | None = None, strict_profile: bool = False) -> dict:
    """``results`` with the gate applied: verdicts of expected failures, requirement rows recomputed,
    and a ``gate`` section (see payconform/schemas/results.schema.json)."""
    findings = check(results, entries, contract, warnings_as_errors=warnings_as_errors, tier=tier,
                     strict_profile=strict_profile)
    out = build_results(run=results.get("run") or {}, tests=results.get("tests") or [], contract=contract)
    out["gate"] = {
        "baseline": baseline_name,
        "warnings_as_errors": warnings_as_errors,
        "strict_profile": strict_profile,
        "passed": not any(f.severity == "error" for f in findings),
        "findings": [f.as_dict() for f in findings],
    }
    return out


def read_results(report: str | Path) -> dict:
    """``results.json`` of a report directory (or the file itself)."""
    p = Path(report)
    if p.is_dir():
        p = p / "results.json"
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BaselineError(f"cannot read results from {report}: {exc}") from None
