"""docs/figures.md is made from the benchmarks' records: regenerating it gives the same text, every benchmark
script records through benchmarks/record.py, and each record says when, where and how it was measured.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchmarks import record

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name not in ("record.py", "__init__.py"))


def test_page_is_generated_from_the_records():
    assert record.PAGE.read_text(encoding="utf-8") == record.render(), (
        "docs/figures.md is not what benchmarks/results/ gives: python benchmarks/record.py")


def test_every_benchmark_script_records_its_figures():
    assert {p.stem for p in SCRIPTS} == set(record.BENCHMARKS), "list each script of benchmarks/ in BENCHMARKS"
    for script in SCRIPTS:
        text = script.read_text(encoding="utf-8")
        assert f'Recording("{script.stem}"' in text and "add_arguments(" in text, (
            f"{script.name} does not record through benchmarks/record.py")


def test_each_record_says_when_where_and_how():
    for path in sorted(record.RESULTS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["benchmark"] in record.BENCHMARKS, path.name
        assert data["command"].startswith(f"python benchmarks/{data['benchmark']}.py"), path.name
        assert data["date"] and data["machine"]["cores"] and data["machine"]["python"], path.name
        assert data["rows"] and all(set(row) == set(data["columns"]) for row in data["rows"]), path.name


def test_a_recording_lands_on_the_page(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(record, "PAGE", tmp_path / "figures.md")
    run = record.Recording("hostile", ["--modes", "html"])
    path = run.save(("mode", "wall s"), [{"mode": "html", "wall s": 12.5, "ignored": 1}], ["a note"])
    page = (tmp_path / "figures.md").read_text(encoding="utf-8")
    assert path.parent == tmp_path / "results" and "ignored" not in path.read_text(encoding="utf-8")
    assert "python benchmarks/hostile.py --modes html" in page and "| html | 12 |" in page and "- a note" in page
    # the other commands of the benchmarks are still listed as not recorded
    assert "python benchmarks/run_cost.py --targets one-key --tiers smoke" in page.split("Not recorded yet")[1]


def test_the_page_is_in_the_site_and_linked():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    assert re.search(r"^\s+- [^:]+: figures\.md$", nav, re.M), "mkdocs.yml's nav does not list figures.md"
    assert any("figures.md" in p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")
               if p != record.PAGE), "no page of the docs links to figures.md"
