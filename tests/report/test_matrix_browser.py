"""The matrix and the annotated spec in a real browser (headless Chromium, as the report's own browser test):
three runs of one small part (the embedded reference, a mutant of it, a tolerated variant), the filters the
address keeps, the links to each run's evidence and to the spec, a compact page for 20 runs (how fast it opens:
`benchmarks/matrix_open.py`), and screenshots to reports/project-tests/ (copy them to docs/ when the pages' look changes)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from payconform.cli import main
from payconform.results.baseline import read_results

from .chromium import chromium, dom, find

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "reports" / "project-tests"
PART = "versioning"
MUTANT, BROKEN = "ver-error-type-renamed", "VER-ERROR-TYPE-STABLE"
VARIANT = "extra-fields"  # every response and event gains fields: "additions are ... safe to ignore"
COLUMNS = {"reference": (), "mutant": ("--mutant", MUTANT), "variant": ("--mutant", VARIANT)}
PAGE_BYTES = 300_000  # 20 runs of 570 requirements as compact data; a table of their cells is over a megabyte

pytestmark = pytest.mark.xdist_group("report-browser")


@pytest.fixture(scope="module")
def browser() -> str:
    return find()


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The three runs of one part, side by side (each a few seconds of the embedded reference)."""
    base = tmp_path_factory.mktemp("runs")
    procs = {name: subprocess.Popen([sys.executable, "-m", "payconform.cli", "run", "--select", PART, "-n", "0", "--fuzz-budget",
                                     "0", "--report-dir", str(base / name), *extra], cwd=base,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for name, extra in COLUMNS.items()}
    for name, proc in procs.items():
        out = proc.communicate(timeout=300)[0]
        assert proc.returncode == (1 if name == "mutant" else 0), f"{name}: {out[-3000:]}"
    return {name: base / name for name in COLUMNS}


@pytest.fixture(scope="module")
def matrix_page(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("matrix")
    assert main(["report", "matrix", *map(str, runs.values()), "--names", ",".join(runs), "--out", str(out)]) == 0
    return out / "index.html"


def verdicts(run: Path) -> dict[str, str]:
    return {r["id"]: r["verdict"] for r in read_results(run)["requirements"]}


def shown_rows(html: str) -> set[str]:
    """Ids of the matrix rows the filter script left visible."""
    return {m.group(1) for m in re.finditer(r'<div class="r[^"]*" id="req-([^"]+)" data-n="\d+"( hidden)?', html)
            if not m.group(2)}


def test_differs_shows_exactly_what_the_mutant_breaks(browser, runs, matrix_page, tmp_path):
    ref, mutant, variant = (verdicts(runs[n]) for n in COLUMNS)
    broken = {r for r, v in mutant.items() if v == "failed"}
    assert BROKEN in broken and all(ref[r] == variant[r] == "passed" for r in broken)
    html = dom(browser, tmp_path, matrix_page, "?differs=1")
    assert shown_rows(html) == broken
    assert f'data-shown="{len(broken)}"' in html


@pytest.mark.parametrize("query, pick", [
    (f"?part={PART}", lambda ref, mut: {r for r, row in ref.items() if row["part"] == PART}),
    ("?col=2&verdict=failed", lambda ref, mut: {r for r, row in mut.items() if row["verdict"] == "failed"}),
    ("?col=1&verdict=failed", lambda ref, mut: set()),
    (f"?q={BROKEN.lower()}", lambda ref, mut: {BROKEN}),
    ("?verdict=profile_mismatch", lambda ref, mut: set()),
])
def test_filters(browser, runs, matrix_page, tmp_path, query, pick):
    ref, mut = ({r["id"]: r for r in read_results(runs[n])["requirements"]} for n in ("reference", "mutant"))
    assert shown_rows(dom(browser, tmp_path, matrix_page, query)) == pick(ref, mut)


def test_cells_link_to_each_run_evidence_and_to_the_spec(browser, runs, matrix_page, tmp_path):
    html = dom(browser, tmp_path, matrix_page, f"?q={BROKEN.lower()}")
    row = re.search(rf'<div class="r d" id="req-{BROKEN}" data-n="\d+">.*?</div>', html, re.DOTALL).group(0)
    hrefs = re.findall(r'href="([^"]+)"', row)
    assert hrefs[0] == f"spec.html#q-{BROKEN}" and len(hrefs) == 1 + len(COLUMNS)
    for href, name in zip(hrefs[1:], COLUMNS):
        page, anchor = href.split("#")
        assert (matrix_page.parent / page).resolve() == (runs[name] / "index.html").resolve()
        assert f'id="{anchor}"' in (runs[name] / "index.html").read_text(encoding="utf-8")
    assert f'id="q-{BROKEN}"' in (matrix_page.parent / "spec.html").read_text(encoding="utf-8")


def test_the_annotated_spec_paints_each_column(browser, matrix_page, runs, tmp_path):
    spec = matrix_page.parent / "spec.html"
    chip = rf'<a class="rid v-(\w+)" data-r="{BROKEN}" id="q-{BROKEN}" href="index.html#req-{BROKEN}"'
    assert re.search(chip, dom(browser, tmp_path, spec, "?col=1")).group(1) == "passed"
    assert re.search(chip, dom(browser, tmp_path, spec, "?col=2")).group(1) == "failed"
    single = dom(browser, tmp_path, runs["mutant"] / "spec.html")  # a run's own annotated spec
    assert re.search(chip, single).group(1) == "failed"
    assert 'href="spec.html" id="spec-link"' in (runs["mutant"] / "index.html").read_text(encoding="utf-8")


def test_twenty_runs_make_a_compact_page_whose_filter_works(browser, runs, tmp_path):
    """Twenty columns: the page carries its cells as compact data, not a table of 11,400 cells, and the
    "differs" filter still shows exactly the mutant's failures. How fast it opens is measured by
    `benchmarks/matrix_open.py` (docs/figures.md), never asserted here: a loaded machine would fail a time."""
    copies = []
    for i in range(20):
        copies.append(tmp_path / "runs" / f"run-{i:02d}")
        shutil.copytree(runs["mutant" if i % 5 == 4 else "reference"], copies[-1],
                        ignore=shutil.ignore_patterns("allure-results", "junit.xml"))
    assert main(["report", "matrix", str(tmp_path / "runs"), "--out", str(tmp_path / "m")]) == 0
    page = tmp_path / "m" / "index.html"
    assert page.stat().st_size < PAGE_BYTES, f"the matrix of 20 runs is {page.stat().st_size} bytes"
    html = dom(browser, tmp_path, page, "?differs=1")
    assert re.search(r'data-ready-ms="\d+"', html), "the page did not finish laying out its rows"
    assert shown_rows(html) == {r for r, v in verdicts(runs["mutant"]).items() if v == "failed"}


@pytest.mark.parametrize("page, query, size", [("index.html", f"?part={PART}", "1280,640"),
                                               ("spec.html", "?col=2", "1100,900")])
def test_screenshots(browser, matrix_page, tmp_path, page, query, size):
    out = tmp_path / "shot.png"
    res = chromium(browser, tmp_path, "--hide-scrollbars", f"--window-size={size}", f"--screenshot={out}",
                   (matrix_page.parent / page).as_uri() + query)
    assert res.returncode == 0 and out.exists(), res.stderr[-2000:]
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and out.stat().st_size > 20_000
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out, SHOTS / f"{page.split('.')[0].replace('index', 'matrix')}-screenshot.png")
