"""The Allure recipe of docs/report.md works: a run's `allure-results/` turned into Allure's own HTML with the
allure command line from the npm registry (`npx --yes allure-commandline generate ...`). The command line
needs Node's npx, the package (npx fetches it from the registry once, then uses its cache) and a Java
runtime; CI does not download Java for this, so the test skips, saying which piece is missing."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from .conftest import cli

ALLURE = ["npx", "--yes", "allure-commandline"]


@pytest.fixture(scope="module")
def allure() -> list[str]:
    if shutil.which("npx") is None:
        pytest.skip("no npx on PATH (install Node.js to turn allure-results into Allure's HTML)")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime on PATH (the allure command line runs on Java; CI does not install one)")
    probe = subprocess.run([*ALLURE, "--version"], check=False, capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip("the npm package allure-commandline is not available (no npm registry and not in npx's "
                    f"cache): {(probe.stderr or probe.stdout).strip()[-300:]}")
    return ALLURE


def test_allure_html_from_a_run(allure, workdir):
    run = cli(workdir, "run", "--report-dir", "rep", "-n", "0", "--", "-k", "not test_fresh_org")
    assert run.returncode == 1, run.stdout + run.stderr  # the fake suite has one failing test
    results, out = workdir / "rep" / "allure-results", workdir / "rep" / "allure-report"
    assert any(results.glob("*-result.json"))
    gen = subprocess.run([*allure, "generate", str(results), "-o", str(out), "--clean"], check=False,
                         capture_output=True, text=True, timeout=300)
    assert gen.returncode == 0, gen.stdout + gen.stderr
    assert (out / "index.html").exists()
    stats = json.loads((out / "widgets" / "summary.json").read_text())["statistic"]
    assert stats["failed"] == 1 and stats["passed"] >= 3 and stats["total"] == 9
