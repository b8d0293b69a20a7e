"""``summary.md``: the run's outcome in a few lines of Markdown, for a CI job's page or a pull request.

Written from results.json's data, as the HTML report is, so the two never disagree: the verdict, the
selected requirements by verdict, each failed requirement with the spec's sentence and a link into
``index.html``, the profile mismatches and what would unlock more. ``payconform run`` appends the same text to
the file ``$GITHUB_STEP_SUMMARY`` names, after the run's files passed the scan for secrets.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..redact import Redactor
from .mismatch import merge, override_yaml
from .records import totals
from .verdicts import Verdict

FILE_NAME = "summary.md"
STEP_SUMMARY_VAR = "GITHUB_STEP_SUMMARY"
MAX_FAILED = 50  # failed requirements listed; the rest are counted (a job page stays readable)
CANNOT_TEST = "cannot test"


def headline(t: Mapping[str, Any], run: Mapping[str, Any]) -> str:
    """How many requirements passed, of those the run selected (``--select``, a tier of marked tests) or,
    for a whole run, of the testable ones."""
    if t["partial"]:
        what = [f"selection: {', '.join(run['select'])}"] if run.get("select") else []
        if run.get("tier") and run["tier"] != "full":
            what.append(f"tier {run['tier']}")
        what.append(f"{t['requirements']} in the contract")
        return f"{t['selected_passed']} of {t['selected']} selected requirements passed ({'; '.join(what)})"
    return (f"{t['covered']} of {t['testable']} testable requirements passed "
            f"({t['requirements']} in the contract)")


def verdict(results: Mapping[str, Any], t: Mapping[str, Any] | None = None) -> str:
    """``passed``, ``failed`` or ``cannot test`` (no selected test passed or failed: every one skipped or
    not run)."""
    t = t or totals(results)
    if t["overall"] == Verdict.FAILED.value:
        return Verdict.FAILED.value
    ran = any(row.get("outcome") in ("passed", "failed", "error") for row in results.get("tests") or [])
    return Verdict.PASSED.value if ran else CANNOT_TEST


def _cell(text: Any) -> str:
    """``text`` fit for one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _counts(reqs: list[Mapping[str, Any]]) -> list[str]:
    by: dict[str, int] = {}
    for r in reqs:
        by[r["verdict"]] = by.get(r["verdict"], 0) + 1
    known = [(v.label, by.pop(v.value)) for v in Verdict if v.value in by]
    rows = known + sorted(by.items())
    return ["| selected requirements | count |", "|---|---:|", *(f"| {label} | {n} |" for label, n in rows)]


def _failed(reqs: list[Mapping[str, Any]]) -> list[str]:
    failing = [r for r in reqs if (v := Verdict.of(r["verdict"])) is not None and v.fails_gate]
    if not failing:
        return []
    lines = ["", f"### Failed requirements ({len(failing)})", ""]
    for r in failing[:MAX_FAILED]:
        section = f" ({_cell(r['section'])})" if r.get("section") else ""
        lines.append(f"- [{r['id']}](index.html#req-{r['id']}){section}")
        if r.get("quote"):
            lines.append(f"  > {_cell(r['quote'])}")
    if len(failing) > MAX_FAILED:
        lines.append(f"- and {len(failing) - MAX_FAILED} more in [the report](index.html#failing)")
    return lines


def _mismatches(rows: list[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    lines = ["", "### Profile mismatches: set these entries in the target file's `profile:`", "",
             "| entry | the deployment | the profile says | tests |", "|---|---|---|---:|"]
    for m in rows:
        expected = _cell(m["expected"]) if m.get("expected") is not None else ""
        lines.append(f"| `{_cell(m['entry'])}` | {_cell(m['seen'])} | {expected} | {len(m['tests'])} |")
    merged = merge(m.get("override") for m in rows)
    if merged:
        lines += ["", "The override that fits what the target showed:", "", "```yaml",
                  override_yaml(merged).rstrip(), "```"]
    return lines


def _unlock(rows: list[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    lines = ["", "### What would unlock more", "", "| requirements | tests | supplied by |", "|---:|---:|---|"]
    lines += [f"| {r['requirements']} | {r['tests']} | {_cell(r['supplied_by'])} |" for r in rows]
    return lines


def render(results: Mapping[str, Any]) -> str:
    """The Markdown summary of ``results`` (results.json's data)."""
    t = totals(results)
    run = results.get("run") or {}
    selected = [r for r in results.get("requirements") or [] if r.get("tests")]
    gate = results.get("gate")
    gated = f" (CI gate against `{gate['baseline']}`)" if gate and gate.get("baseline") else ""
    ended = run.get("ended") or {}
    early = [f"The run ended early ({ended['how']}): {_cell(ended['detail'])}.", ""] \
        if ended.get("how") not in (None, "complete") else []
    lines = [f"## payconform: {verdict(results, t)}{gated}", "",
             f"**{headline(t, run)}**", "", *early,
             f"Target `{run.get('target')}`, contract {run.get('contract_version')}, "
             f"run {run.get('started')} to {run.get('finished')}.", "",
             *_counts(selected),
             *_failed(selected),
             *_mismatches(results.get("profile_mismatches") or []),
             *_unlock(results.get("unlock") or []),
             "", "[The full report](index.html) (results.json beside it)."]
    return "\n".join(lines) + "\n"


def write_summary(directory: str | Path, results: Mapping[str, Any], redactor: Redactor | None = None) -> Path:
    """Write ``summary.md`` into the report directory (redacted: the scan of the run's files covers it)."""
    text = render(results)
    path = Path(directory) / FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(redactor.redact(text) if redactor is not None else text, encoding="utf-8")
    return path


def append_step_summary(directory: str | Path) -> Path | None:
    """Append the report directory's ``summary.md``, as written and scanned, to the file ``$GITHUB_STEP_SUMMARY``
    names (never overwriting what earlier steps wrote); None when the variable is unset or there is no summary."""
    name = os.environ.get(STEP_SUMMARY_VAR)
    source = Path(directory) / FILE_NAME
    if not name or not source.is_file():
        return None
    with open(name, "a", encoding="utf-8") as out:
        out.write("\n" + source.read_text(encoding="utf-8"))
    return Path(name)
