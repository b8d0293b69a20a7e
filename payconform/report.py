"""The self-contained HTML conformance report (no server, no network, no external resources)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import jinja2

from . import paths
from .contract import DEFAULT_PARTS
from .redact import Redactor
from .results import totals

LABELS = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "needs_operator": "needs operator",
    "needs_clock": "needs clock",
    "needs_slow": "needs --run-slow",
    "not_tested": "not tested",
    "not_testable": "not testable",
    "not_specified": "not specified",
}


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(paths.templates_dir())),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=False,
        lstrip_blocks=False,
    )


def render(results: Mapping[str, Any], contract=None, redactor: Redactor | None = None) -> str:
    part_list = list(contract.parts) if contract is not None else list(DEFAULT_PARTS)
    parts = [{"slug": p["slug"], "title": p["title"], "requirements": []} for p in part_list]
    by_slug = {p["slug"]: p for p in parts}
    other: dict[str, Any] = {"slug": "other", "title": "Other (no known part)", "requirements": []}
    for req in results.get("requirements") or []:
        by_slug.get(req.get("part"), other)["requirements"].append(req)
    if other["requirements"]:
        parts.append(other)
    tests = {t["nodeid"]: t for t in results.get("tests") or []}
    html = _environment().get_template("report.html.j2").render(
        run=results.get("run") or {}, totals=totals(results), parts=parts, tests=tests, labels=LABELS
    )
    return redactor.redact(html) if redactor is not None else html


def write_report(directory: str | Path, results: Mapping[str, Any], contract=None,
                 redactor: Redactor | None = None) -> Path:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / "index.html"
    path.write_text(render(results, contract, redactor), encoding="utf-8")
    return path
