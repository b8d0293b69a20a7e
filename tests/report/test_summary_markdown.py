"""summary.md: written from results.json's data (so it agrees with the HTML), appended to $GITHUB_STEP_SUMMARY
by `payconform run` only after the run's files passed the scan for secrets."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jsonschema

from payconform.redact import Redactor
from payconform.results.html import render as render_html
from payconform.results.markdown import append_step_summary, render, write_summary
from payconform.results.records import build_results

from ..harness.fake_project import cli_env
from .conftest import CONTRACT, SCHEMA_PATH, SECRET, synthetic_results, synthetic_tests


def _anchors(html: str) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', html))


def test_the_summary_tells_the_verdict_counts_failures_mismatches_and_unlocks(results):
    results["profile_mismatches"] = [{"entry": "operations.fundSandbox", "seen": "404 | ROUTE_NOT_FOUND",
                                      "expected": "POST /sandbox/funding", "tests": ["a", "b"],
                                      "override": {"operations": {"fundSandbox": {"path": "/fund"}}}}]
    text = render(results)
    assert text.startswith("## payconform: failed\n")
    assert "**1 of 4 testable requirements passed (6 in the contract)**" in text
    assert "| passed | 1 |" in text and "| failed | 1 |" in text and "| needs operator | 1 |" in text
    assert "| warning (approximate timing) | 1 |" in text
    assert "| not tested |" not in text  # only the requirements the run's tests check are counted
    assert "- [ERR-B](index.html#req-ERR-B) (Errors)\n  > A replayed key answers 409." in text
    assert "`operations.fundSandbox` | 404 \\| ROUTE_NOT_FOUND | POST /sandbox/funding | 2 |" in text
    assert "fundSandbox:\n      path: /fund" in text
    assert "| 1 | 1 | an operator adapter" in text
    html_ids = _anchors(render_html(results, CONTRACT))
    links = re.findall(r"\(index\.html#([^)]+)\)", text)
    assert links and set(links) <= html_ids, set(links) - html_ids


def test_a_selection_counts_its_selected_requirements():
    data = synthetic_results()
    data["run"]["select"] = ["CONV-A", "ERR-B"]
    data = build_results(run=data["run"], tests=[t for t in synthetic_tests() if t["requirements"][0] in
                                                  ("CONV-A", "ERR-B")], contract=CONTRACT)
    assert data["run"]["selected_requirements"] == 2
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    headline = "1 of 2 selected requirements passed (selection: CONV-A, ERR-B; 6 in the contract)"
    assert f"**{headline}**" in render(data)
    html = render_html(data, CONTRACT)
    assert re.search(r'id="coverage">1 / 2<', html) and headline in html


def test_a_run_where_nothing_ran_cannot_test():
    data = synthetic_results()
    data = build_results(run=data["run"], tests=[t for t in synthetic_tests() if t["outcome"] == "skipped"],
                         contract=CONTRACT)
    assert render(data).startswith("## payconform: cannot test\n")
    data["run"]["ended"] = {"how": "interrupted", "detail": "SIGINT: the run ended before 3 tests ran"}
    assert "The run ended early (interrupted): SIGINT: the run ended before 3 tests ran.\n" in render(data)


def test_the_summary_is_redacted_and_the_step_summary_appended(results, tmp_path, monkeypatch):
    results["requirements"][1]["quote"] = f"key {SECRET}"
    path = write_summary(tmp_path, results, Redactor([SECRET]))
    assert SECRET not in path.read_text()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert append_step_summary(tmp_path) is None
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    append_step_summary(tmp_path)
    assert step.read_text() == "earlier step\n\n" + path.read_text()


def test_payconform_run_writes_the_summary_and_appends_it(workdir):
    """One run of the fake suite's selection: summary.md beside the report, the same text on the job's page."""
    step = workdir / "step.md"
    step.write_text("# earlier\n")
    env = dict(cli_env(workdir), GITHUB_STEP_SUMMARY=str(step))
    res = subprocess.run([sys.executable, "-m", "payconform.cli", "run", "--select", "DEMO-*", "-n", "0",
                          "--report-dir", "rep"], cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "requirements: 1 of 2 selected requirements passed (selection: DEMO-*; 8 in the contract)" in res.stdout
    summary = (workdir / "rep" / "summary.md").read_text()
    assert step.read_text() == "# earlier\n\n" + summary
    assert "1 of 2 selected requirements passed" in summary and "[DEMO-FAIL](index.html#req-DEMO-FAIL)" in summary
    assert 'id="req-DEMO-FAIL"' in (workdir / "rep" / "index.html").read_text()
    assert not re.search(r"svc_test_(?!\*)", summary)
    assert json.loads((workdir / "rep" / "results.json").read_text())["run"]["selected_requirements"] == 2
