"""The self-contained HTML conformance report (no server, no network, no external resources)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Mapping

import jinja2

from .. import paths
from .annotated import write_page
from .causes import failure_causes
from .mismatch import merge, override_yaml, summary
from ..contract import DEFAULT_PARTS
from ..redact import Redactor
from .markdown import headline
from .records import totals
from .verdicts import FAILURE_VERDICTS, Verdict


def split_message(message: str | None) -> dict[str, str]:
    """The parts of a ``payconform.checks.expect`` failure message a reader looks for first: the requirement
    lines, what was expected and what the target did (``expected:`` / ``target answered:`` lines)."""
    lines = (message or "").splitlines()
    out = {"expected": "", "seen": "", "requirements": "", "rest": ""}
    key = "requirements"
    for line in lines:
        low = line.lower()
        if low.startswith("expected:"):
            key, line = "expected", line.split(":", 1)[1].strip()
        elif low.startswith(("target answered:", "seen:", "got:")):
            key, line = "seen", line.split(":", 1)[1].strip()
        elif key == "requirements" and not line.startswith("["):
            key = "rest"
        out[key] = f"{out[key]}\n{line}" if out[key] else line
    return out


@functools.cache
def _environment() -> jinja2.Environment:
    """One environment per process, so the report template is compiled once however many reports it writes."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.templates_dir())),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=False,
        lstrip_blocks=False,
    )


def render(results: Mapping[str, Any], contract=None, redactor: Redactor | None = None, *,
           spec_page: str | None = None) -> str:
    part_list = list(contract.parts) if contract is not None else list(DEFAULT_PARTS)
    parts = [{"slug": p["slug"], "title": p["title"], "requirements": []} for p in part_list]
    by_slug = {p["slug"]: p for p in parts}
    other: dict[str, Any] = {"slug": "other", "title": "Other (no known part)", "requirements": []}
    for req in results.get("requirements") or []:
        by_slug.get(req.get("part"), other)["requirements"].append(req)
    if other["requirements"]:
        parts.append(other)
    cost = results.get("cost")
    for part in parts:
        part["requests"] = cost["by_part"].get(part["slug"], 0) if cost else None
        counts: dict[str, int] = {}
        for req in part["requirements"]:
            counts[req["verdict"]] = counts.get(req["verdict"], 0) + 1
        part["bar"] = [(v.value, counts[v.value]) for v in Verdict if counts.get(v.value)] + \
            [(v, n) for v, n in counts.items() if Verdict.of(v) is None]
    tests = {}
    for t in results.get("tests") or []:
        tests[t["nodeid"]] = dict(t, parsed=split_message(t.get("message")))
    mismatches = results.get("profile_mismatches")
    if mismatches is None:
        mismatches = summary(results.get("tests") or [])
    merged = merge(m.get("override") for m in mismatches)
    requirements = results.get("requirements") or []
    depth = {r["id"]: contract.checks(r["id"]) for r in requirements} if contract is not None else {}
    html = _environment().get_template("report.html.j2").render(
        run=results.get("run") or {}, totals=totals(results), parts=parts, tests=tests, headline=headline,
        labels={v.value: v.label for v in Verdict}, verdicts=list(Verdict),
        gate_failing={v.value for v in Verdict if v.fails_gate}, findings=FAILURE_VERDICTS,
        untestable={v.value for v in Verdict if not v.testable}, gate=results.get("gate"),
        unlock=results.get("unlock") or [], cost=cost,
        causes=failure_causes(results.get("tests") or [], contract),
        mismatches=mismatches, mismatched_tests=len({n for m in mismatches for n in m["tests"]}),
        mismatch_yaml=override_yaml(merged) if merged else "",
        untold=[m["entry"] for m in mismatches if not m.get("override")], spec_page=spec_page, depth=depth,
    )
    return redactor.redact(html) if redactor is not None else html


def write_report(directory: str | Path, results: Mapping[str, Any], contract=None,
                 redactor: Redactor | None = None) -> Path:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    spec = write_page(d, contract, title=str((results.get("run") or {}).get("target")), columns=["this run"],
                      verdicts={r["id"]: [r["verdict"]] for r in results.get("requirements") or []},
                      back="index.html")
    path = d / "index.html"
    path.write_text(render(results, contract, redactor, spec_page=spec.name if spec else None), encoding="utf-8")
    return path
