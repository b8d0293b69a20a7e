"""How long `payconform report matrix`'s page takes to open with many runs, in headless Chromium.

Two runs of one small part against the embedded reference (as is, and under a mutant) are copied into `--runs`
columns; the matrix page of them is opened `--repeat` times with the "differs" filter, and the page's own
measure (`data-ready-ms`: from the start of its script to the rows laid out) is printed and recorded
(``benchmarks/record.py``: benchmarks/results/ and docs/figures.md). Run from the repository root:
``python benchmarks/matrix_open.py`` (``--runs 40`` for a wider matrix).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.record import Recording, add_arguments, describe  # noqa: E402
from payconform.cli import main as payconform  # noqa: E402
from tests.report.chromium import dom, find  # noqa: E402

PART, MUTANT = "versioning", "ver-error-type-renamed"
COLUMNS = ["runs", "requirements", "page KB", "ready ms (median)", "ready ms (max)", "opens"]


def _run(base: Path, name: str, *extra: str) -> Path:
    """One run of `PART` against the embedded reference; its report directory."""
    subprocess.run([sys.executable, "-m", "payconform.cli", "run", "--select", PART, "-n", "0", "--fuzz-budget", "0",
                    "--report-dir", str(base / name), *extra], cwd=base, capture_output=True, check=False)
    return base / name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    add_arguments(parser)
    ns = parser.parse_args(argv)
    recording = Recording("matrix_open", argv)
    print(f"machine: {describe(recording.machine)}")
    browser = find()
    with tempfile.TemporaryDirectory(prefix="payconform-matrix-") as tmp:
        base = Path(tmp)
        sources = [_run(base, "reference"), _run(base, "mutant", "--mutant", MUTANT)]
        for i in range(ns.runs):
            shutil.copytree(sources[1 if i % 5 == 4 else 0], base / "columns" / f"run-{i:02d}",
                            ignore=shutil.ignore_patterns("allure-results", "junit.xml"))
        assert payconform(["report", "matrix", str(base / "columns"), "--out", str(base / "m")]) == 0
        page = base / "m" / "index.html"
        ready = [int(re.search(r'data-ready-ms="(\d+)"', dom(browser, base, page, "?differs=1")).group(1))
                 for _ in range(ns.repeat)]
        requirements = len(json.loads((base / "m" / "matrix.json").read_text(encoding="utf-8"))["requirements"])
        size = page.stat().st_size
    row = {"runs": ns.runs, "requirements": requirements, "page KB": round(size / 1024, 1),
           "ready ms (median)": statistics.median(ready), "ready ms (max)": max(ready), "opens": ns.repeat}
    print(", ".join(f"{k}: {v}" for k, v in row.items()))
    if not ns.no_record:
        print(f"recorded in {recording.save(COLUMNS, [row])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
