"""The report in a real browser: headless Chromium (Debian's `chromium`) renders a report with failures,
the part / verdict / search filters hide what they should, and a screenshot goes to
reports/project-tests/report-screenshot.png (copy it to docs/report-screenshot.png, which docs/report.md
shows, when the report's look changes). The filter state lives in the query string, so
Chromium's `--dump-dom` sees the DOM after the report's own script has applied a filter."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from payconform.results.html import write_report

from .chromium import chromium, dom, find
from .conftest import CONTRACT, synthetic_results

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "reports" / "project-tests" / "report-screenshot.png"
pytestmark = pytest.mark.xdist_group("report-browser")


@pytest.fixture(scope="module")
def browser() -> str:
    return find()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return write_report(tmp_path_factory.mktemp("report"), synthetic_results(), CONTRACT)


def visible_requirements(html: str) -> set[str]:
    """Ids of requirement blocks the filter script left visible (it sets the `hidden` attribute)."""
    shown = set()
    for tag in re.findall(r'<div class="req [^"]*"[^>]*>', html):
        if " hidden" not in tag:
            shown.add(re.search(r'id="req-([^"]+)"', tag).group(1))
    return shown


@pytest.mark.parametrize("query, expected", [
    ("", {"CONV-A", "ERR-B", "EVT-SLOW", "AUTH-OP", "LIM-NS", "LIM-NT"}),
    ("?verdict=failed", {"ERR-B"}),
    ("?part=limits", {"LIM-NS", "LIM-NT"}),
    ("?part=limits&verdict=not_testable", {"LIM-NT"}),
    ("?q=req_fail_42", {"ERR-B"}),  # the search box finds a request id
    ("?q=about+15", {"EVT-SLOW"}),  # ... and the spec's words
    ("?verdict=passed&q=nothing-like-this", set()),
])
def test_filters(browser, report, tmp_path, query, expected):
    html = dom(browser, tmp_path, report, query)
    assert visible_requirements(html) == expected
    assert f'data-shown="{len(expected)}"' in html
    assert f"{len(expected)} of 6 requirements shown" in html


def test_filtered_parts_are_hidden(browser, report, tmp_path):
    html = dom(browser, tmp_path, report, "?verdict=failed")
    sections = dict(re.findall(r'<section class="part" id="part-([a-z]+)"[^>]*?( hidden(?:="")?)?>', html))
    assert sections["errors"] == "" and all(sections[s] for s in sections if s != "errors")


def test_screenshot(browser, report, tmp_path):
    out = tmp_path / "shot.png"
    res = chromium(browser, tmp_path, "--hide-scrollbars", "--window-size=1280,1500", f"--screenshot={out}",
                   report.as_uri())
    assert res.returncode == 0 and out.exists(), res.stderr[-2000:]
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000  # a rendered page, not a blank one
    SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(out, SCREENSHOT)
