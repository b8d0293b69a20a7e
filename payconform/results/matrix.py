"""The conformance matrix: several runs side by side, requirement by requirement, as web-platform-tests shows
implementations (a team's sandboxes, a release and its candidate, other vendors' deployments).

A matrix is built from finished runs' report directories: a column per run, a row per requirement of the
catalog, grouped by the spec's parts, each cell the requirement's verdict in that run and a link to the run's
evidence. When every column ran against the same target, the columns are that target's history: a trend of
passed requirements per part, and the first run in which each requirement changed verdict.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import annotated
from .baseline import BaselineError, read_results
from .html import _environment  # the report's template environment: one per process
from .records import totals, write_json
from .verdicts import Verdict

MATRIX_VERSION = 1
JSON_FILE = "matrix.json"
# The cell text of each verdict: a few letters a column of 20 runs has room for (the label is the cell's title).
SHORT: dict[Verdict, str] = {
    Verdict.FAILED: "fail", Verdict.WARNING: "warn", Verdict.EXPECTED_FAILURE: "xfail", Verdict.NOT_RUN: "unrun",
    Verdict.PROFILE_MISMATCH: "profile", Verdict.PASSED: "pass", Verdict.NEEDS_OPERATOR: "operator",
    Verdict.NEEDS_CLOCK: "clock", Verdict.NEEDS_SLOW: "slow", Verdict.SKIPPED: "skip",
    Verdict.NOT_TESTED: "untested", Verdict.NOT_TESTABLE: "untestable", Verdict.NOT_SPECIFIED: "unspecified",
}


class MatrixError(ValueError):
    """A run cannot be read, or the names do not fit the runs."""


@dataclass
class Run:
    """One column: a finished run's results and the directory its report lives in."""

    name: str
    directory: Path
    results: dict


def expand(sources: Sequence[str | Path]) -> list[Path]:
    """The runs ``sources`` name: a report directory (or its results.json) is one run; a folder of report
    directories is each of them, oldest first (by the run's start, then by name)."""
    out: list[Path] = []
    for source in map(Path, sources):
        if source.is_file() or (source / "results.json").is_file():
            out.append(source)
            continue
        found = [p for p in sorted(source.iterdir()) if (p / "results.json").is_file()] if source.is_dir() else []
        if not found:
            raise MatrixError(f"{source}: neither a report directory (no results.json) nor a folder of them")
        started = {p: str((read_results(p).get("run") or {}).get("started") or "") for p in found}
        out += sorted(found, key=lambda p: (started[p], p.name))
    return out


def load_runs(sources: Sequence[str | Path], names: Sequence[str] | None = None) -> list[Run]:
    """The columns of a matrix, named by ``names`` or else by their report directories' names."""
    try:
        paths = expand(sources)
        results = [read_results(p) for p in paths]
    except BaselineError as exc:
        raise MatrixError(str(exc)) from None
    if names and len(names) != len(paths):
        raise MatrixError(f"{len(names)} names for {len(paths)} runs")
    directories = [p.parent if p.is_file() else p for p in paths]
    return [Run(names[i] if names else d.resolve().name, d, r) for i, (d, r) in enumerate(zip(directories, results))]


def _first_change(verdicts: Sequence[str | None]) -> int | None:
    return next((i for i in range(1, len(verdicts)) if verdicts[i] != verdicts[i - 1]), None)


def build(runs: Sequence[Run], contract: Any) -> dict:
    """The matrix as data (``matrix.json``): columns with their totals, the parts with the requirements each
    column passed, and a row per requirement (catalog order, then ids only the runs know) with a verdict per
    column (null where a run has no such requirement)."""
    by_run = [{r["id"]: r for r in run.results.get("requirements") or []} for run in runs]
    ids = list(contract.requirements) + [rid for rows in by_run for rid in rows if rid not in contract.requirements]
    ids = list(dict.fromkeys(ids))
    targets = {str((run.results.get("run") or {}).get("target")) for run in runs}
    history = len(runs) > 1 and len(targets) == 1
    rows = []
    for rid in ids:
        info = next((rows_[rid] for rows_ in by_run if rid in rows_), None) or contract.requirements.get(rid) or {}
        verdicts = [rows_.get(rid, {}).get("verdict") for rows_ in by_run]
        row = {"id": rid, "part": info.get("part"), "section": info.get("section"), "quote": info.get("quote"),
               "verdicts": verdicts, "differs": len(set(verdicts)) > 1}
        if history:
            row["first_change"] = _first_change(verdicts)
        rows.append(row)
    known = {p["slug"] for p in contract.parts}
    parts = [dict(p) for p in contract.parts]
    if any(r["part"] not in known for r in rows):
        parts.append({"slug": "other", "title": "Other (no known part)"})
    for part in parts:
        mine = [r for r in rows if r["part"] == part["slug"] or (part["slug"] == "other" and r["part"] not in known)]
        part["requirements"] = len(mine)
        part["passed"] = [sum(1 for r in mine if r["verdicts"][i] == Verdict.PASSED.value) for i in range(len(runs))]
    columns = []
    for run in runs:
        meta, t = run.results.get("run") or {}, totals(run.results)
        columns.append({"name": run.name, "source": str(run.directory), "target": meta.get("target"),
                        "started": meta.get("started"), "contract_version": meta.get("contract_version"),
                        "select": meta.get("select") or [], "tier": meta.get("tier"), "overall": t["overall"],
                        "requirements": t["requirements"], "covered": t["covered"], "testable": t["testable"],
                        "partial": t["partial"], "selected": t["selected"], "selected_passed": t["selected_passed"],
                        "verdicts": t["requirement_verdicts"]})
    return {"matrix_version": MATRIX_VERSION, "history": history, "columns": columns, "parts": parts,
            "requirements": rows}


def _evidence(run: Run, out: Path) -> str | None:
    """The link from the matrix to the run's report (relative, so the folders can move together)."""
    report = run.directory / "index.html"
    return Path(os.path.relpath(report.resolve(), out.resolve())).as_posix() if report.is_file() else None


def _trend(passed: Sequence[int], width: int = 160, height: int = 28) -> str:
    """The points of a sparkline of ``passed`` (SVG ``polyline`` coordinates), scaled from its lowest to its
    highest value so that one requirement more or less shows; a flat line when nothing changed."""
    step = width / max(len(passed) - 1, 1)
    low, high = min(passed, default=0), max(passed, default=0)
    return " ".join(f"{i * step:.1f},{height - (height * (n - low) / (high - low) if high > low else height / 2):.1f}"
                    for i, n in enumerate(passed))


def _page_data(data: dict, links: Sequence[str | None], spec_page: str | None, placed: set[str]
               ) -> tuple[list[str], str]:
    """The vocabulary of the runs' verdicts (the known ones in order, then any other) and the rows as the
    page's script draws them: each verdict one letter, a row ``[id, part index, quote, letters, differs,
    first change or -1, in the annotated spec]``."""
    known = [v.value for v in Verdict]
    vocabulary = known + sorted({v for r in data["requirements"] for v in r["verdicts"] if v and v not in known})
    letter = {v: chr(97 + i) for i, v in enumerate(vocabulary)}
    index = {p["slug"]: i for i, p in enumerate(data["parts"])}
    rows = [[r["id"], index.get(r["part"], index.get("other", 0)), r["quote"] or "",
             "".join(letter[v] if v else "-" for v in r["verdicts"]), int(r["differs"]),
             r["first_change"] if r.get("first_change") is not None else -1, int(r["id"] in placed)]
            for r in data["requirements"]]
    page = {"columns": [{"name": c["name"], "link": link} for c, link in zip(data["columns"], links)],
            "parts": [{"slug": p["slug"], "title": p["title"], "passed": p["passed"]} for p in data["parts"]],
            "rows": rows, "vocabulary": vocabulary, "history": data["history"], "spec": spec_page,
            "labels": {v.value: v.label for v in Verdict}, "short": {v.value: SHORT[v] for v in Verdict}}
    return vocabulary, json.dumps(page, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def render(data: dict, runs: Sequence[Run], out: Path, *, spec_page: str | None, placed: set[str]) -> str:
    """The matrix page (self-contained: styles, data and script inline); ``placed`` are the requirements the
    annotated spec ``spec_page`` marks, whose ids link there."""
    links = [_evidence(run, out) for run in runs]
    vocabulary, page = _page_data(data, links, spec_page, placed)
    return _environment().get_template("matrix.html.j2").render(
        data=data, links=links, verdicts=list(Verdict), vocabulary=vocabulary,
        labels={v.value: v.label for v in Verdict}, spec_page=spec_page, trend=_trend, page=page)


def write(out: str | Path, runs: Sequence[Run], contract: Any) -> tuple[dict, dict[str, Path]]:
    """Write ``index.html``, ``matrix.json`` and the annotated spec (``spec.html``) into ``out``; answers the
    matrix's data and the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = build(runs, contract)
    written = {"json": write_json(out / JSON_FILE, data)}
    spec = annotated.write_page(out, contract, title=f"{len(runs)} runs", columns=[r.name for r in runs],
                                verdicts={r["id"]: r["verdicts"] for r in data["requirements"]}, back="index.html")
    if spec is not None:
        written["spec"] = spec
    html = out / "index.html"
    ann = annotated.annotation(contract)
    html.write_text(render(data, runs, out, spec_page=spec.name if spec else None,
                           placed=set(ann.places) if ann else set()), encoding="utf-8")
    written["html"] = html
    return data, written
