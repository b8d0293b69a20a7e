"""The conformance matrix and the annotated spec, from hand-made results: rows, columns and totals, history,
links to each run's evidence, and every catalogued quote marked in place in the spec copy."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from payconform.cli import main
from payconform.contract import RECEIVER, Contract
from payconform.results import annotated, matrix
from payconform.results.html import write_report
from payconform.results.records import requirement_rows
from payconform.results.verdicts import Verdict

from .conftest import synthetic_results

CATALOG = Contract.load()
FIRST, SECOND, THIRD = list(CATALOG.requirements)[:3]


def results_with(verdicts: dict[str, str], *, started: str, target: str = "http://a.example/business/api/v1",
                 absent: tuple[str, ...] = ()) -> dict:
    """A run of the real catalog: every requirement passed unless ``verdicts`` says otherwise."""
    rows = [dict(r, verdict=verdicts.get(r["id"], Verdict.PASSED.value))
            for r in requirement_rows(CATALOG, []) if r["id"] not in absent]
    return {"run": {"target": target, "started": started, "contract_version": "1"}, "tests": [], "requirements": rows}


def save(directory: Path, results: dict, *, report: bool = True) -> Path:
    directory.mkdir(parents=True)
    (directory / "results.json").write_text(json.dumps(results), encoding="utf-8")
    if report:
        (directory / "index.html").write_text("<html></html>", encoding="utf-8")
    return directory


@pytest.fixture
def three(tmp_path) -> list[Path]:
    return [save(tmp_path / "ref", results_with({}, started="2026-01-01")),
            save(tmp_path / "mutant", results_with({SECOND: "failed"}, started="2026-01-02")),
            save(tmp_path / "other", results_with({THIRD: "profile_mismatch"}, started="2026-01-03",
                                                  target="http://b.example"), report=False)]


def test_rows_columns_differences_and_totals(three):
    data = matrix.build(matrix.load_runs(three), CATALOG)
    assert [c["name"] for c in data["columns"]] == ["ref", "mutant", "other"]
    rows = {r["id"]: r for r in data["requirements"]}
    assert list(rows) == list(CATALOG.requirements)
    assert rows[SECOND]["verdicts"] == ["passed", "failed", "passed"]
    assert rows[THIRD]["verdicts"] == ["passed", "passed", "profile_mismatch"]
    assert {r for r, row in rows.items() if row["differs"]} == {SECOND, THIRD}
    assert [c["covered"] for c in data["columns"]] == [len(rows), len(rows) - 1, len(rows) - 1]
    assert [c["verdicts"].get("failed", 0) for c in data["columns"]] == [0, 1, 0]
    assert not data["history"] and "first_change" not in rows[SECOND]  # two targets: not one target's history
    first_part = next(p for p in data["parts"] if p["slug"] == rows[SECOND]["part"])
    assert first_part["passed"][0] == first_part["passed"][1] + 1


def test_the_page_carries_every_run_and_links_each_cell(three, tmp_path):
    out = tmp_path / "out"
    data, written = matrix.write(out, matrix.load_runs(three, ["reference", "broken", "other"]), CATALOG)
    page = written["html"].read_text(encoding="utf-8")
    assert json.loads(written["json"].read_text(encoding="utf-8")) == data
    assert set(matrix.SHORT) == set(Verdict)  # a cell text for every verdict of the vocabulary
    drawn = json.loads(re.search(r'<script type="application/json" id="matrix-data">(.*?)</script>', page,
                                 re.DOTALL).group(1))
    assert [c["link"] for c in drawn["columns"]] == ["../ref/index.html", "../mutant/index.html", None]  # no report
    row = next(r for r in drawn["rows"] if r[0] == SECOND)
    assert [drawn["vocabulary"][ord(ch) - 97] for ch in row[3]] == ["passed", "failed", "passed"]
    assert row[4] == 1 and row[6] == 1  # differs; marked in the annotated spec
    assert '<option value="profile_mismatch">profile mismatch</option>' in page
    assert 'href="spec.html" id="spec-link"' in page and ">reference</a>" in page and ">broken</a>" in page
    assert not re.search(r'<(link|img|iframe)\b|\bsrc=|url\(|@import', page)  # self-contained
    spec = written["spec"].read_text(encoding="utf-8")
    assert '<option value="3">other</option>' in spec  # the annotated spec's column chooser
    assert f'"{SECOND}":["passed","failed","passed"]' in spec


def test_a_folder_of_runs_of_one_target_is_its_history(tmp_path):
    folder = tmp_path / "nightly"
    save(folder / "b", results_with({}, started="2026-01-01"))  # names out of time order on purpose
    save(folder / "a", results_with({SECOND: "failed"}, started="2026-01-02"))
    save(folder / "c", results_with({SECOND: "failed", THIRD: "failed"}, started="2026-01-03"))
    runs = matrix.load_runs([folder])
    assert [r.name for r in runs] == ["b", "a", "c"]
    data = matrix.build(runs, CATALOG)
    rows = {r["id"]: r for r in data["requirements"]}
    assert data["history"] and rows[SECOND]["first_change"] == 1 and rows[THIRD]["first_change"] == 2
    assert rows[FIRST]["first_change"] is None
    page = matrix.render(data, runs, tmp_path, spec_page=None, placed=set())
    assert 'id="trend"' in page and "<polyline" in page and ">changed in</span>" in page


def test_a_requirement_absent_from_a_run_differs(tmp_path):
    runs = matrix.load_runs([save(tmp_path / "x", results_with({}, started="1")),
                             save(tmp_path / "y", results_with({}, started="2", absent=(FIRST,)))])
    row = matrix.build(runs, CATALOG)["requirements"][0]
    assert row["verdicts"] == ["passed", None] and row["differs"]


def test_the_command(three, tmp_path, capsys):
    assert main(["report", "matrix", *map(str, three), "--names", "r,m,o", "--out", str(tmp_path / "m")]) == 0
    assert "matrix of 3 runs" in capsys.readouterr().out
    assert {p.name for p in (tmp_path / "m").iterdir()} == {"index.html", "matrix.json", "spec.html"}
    assert main(["report", "matrix", *map(str, three), "--names", "r,m", "--out", str(tmp_path / "n")]) == 2
    assert "2 names for 3 runs" in capsys.readouterr().err
    assert main(["report", "matrix", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "n")]) == 2
    assert "neither a report directory" in capsys.readouterr().err


# -- the annotated spec ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("subject", ["server", RECEIVER])
def test_every_catalog_quote_is_marked_in_place(subject):
    """Each excerpt of each requirement's quote stands in the spec copy, and the page marks it there with a
    chip linking to the requirement."""
    contract = CATALOG if subject == "server" else Contract.load(subject=RECEIVER)
    ann = annotated.annotation(contract)
    assert not ann.unplaced, f"quotes not found in contract/spec/{annotated.SPEC_FILE}: {ann.unplaced}"
    for rid, req in contract.requirements.items():
        assert len(ann.places[rid]) == len(str(req["quote"]).split(" ... ")), rid
        assert f'data-r="{rid}" id="q-{rid}" href="index.html#req-{rid}"' in ann.body, rid


class _Nesting(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.text: list[str] = []
        self.wrong: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.wrong.append((tag, self.stack[-3:]))
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data):
        if not self.stack or self.stack[-1] != "a":  # chips are added text
            self.text.append(data)


def test_marks_nest_and_lose_no_word():
    ann = annotated.annotation(CATALOG)
    marked, plain = _Nesting(), _Nesting()
    marked.feed(ann.body)
    plain.feed(annotated.renderer().render(annotated.spec_path(CATALOG).read_text(encoding="utf-8")))
    assert not marked.wrong
    assert "".join(marked.text) == "".join(plain.text)


SMALL_SPEC = """## Limits

A key makes 100 requests a minute. Nobody quotes this sentence.

| Limit | Value |
|---|---|
| Page size | 1 to 100 |
| Body | not shown |

Webhooks retry `8` times.
"""


def test_overlaps_rows_and_gaps():
    reqs = {"LIM-RATE": {"quote": "A key makes 100 requests a minute.", "section": "Limits"},
            "LIM-MINUTE": {"quote": "100 requests a minute", "section": "Limits"},
            "LIM-PAGE": {"quote": "| Page size | 1 to 100 |", "section": "Limits"},
            "LIM-RETRY": {"quote": "retry `8` times ... no such words", "section": "Limits"}}
    ann = annotated.annotate(SMALL_SPEC, reqs, {"Limits": "limits"})
    assert '<h2 id="part-limits">' in ann.body
    assert '<mark class="q" data-r="LIM-RATE">A key makes </mark>' in ann.body
    assert '<mark class="q" data-r="LIM-RATE LIM-MINUTE">100 requests a minute</mark>' in ann.body
    assert '<tr class="q row" data-r="LIM-PAGE">' in ann.body
    assert '<tr class="gap">' in ann.body  # the `Body` row: no requirement quotes it
    assert '<mark class="q" data-r="LIM-RETRY">retry <code>8</code> times</mark>' in ann.body
    assert ann.unplaced == [("LIM-RETRY", "no such words")]
    assert (ann.blocks, ann.gaps) == (4, 1)


def test_the_report_links_to_its_annotated_spec(tmp_path):
    results = synthetic_results()
    results["requirements"] = [dict(r, verdict="failed") for r in requirement_rows(CATALOG, [])]
    index = write_report(tmp_path, results, CATALOG)
    report = index.read_text(encoding="utf-8")
    assert 'href="spec.html" id="spec-link"' in report and f'href="spec.html#q-{FIRST}">in the spec<' in report
    spec = (tmp_path / "spec.html").read_text(encoding="utf-8")
    assert f'"{FIRST}":["failed"]' in spec and 'id="f-col"' not in spec  # one run: no column chooser
    assert not re.search(r'<(link|img|iframe)\b|\bsrc=|url\(|@import', spec)


def test_a_report_without_a_spec_copy_has_no_link(tmp_path):
    from .conftest import CONTRACT

    index = write_report(tmp_path, synthetic_results(), CONTRACT)
    assert "spec-link" not in index.read_text(encoding="utf-8") and not (tmp_path / "spec.html").exists()
