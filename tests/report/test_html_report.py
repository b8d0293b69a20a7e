"""The HTML report: self-contained, in the spec's order, every verdict, failures readable at a glance."""

from __future__ import annotations

import re

from payconform.redact import Redactor
from payconform.results.html import render, split_message

from .conftest import CONTRACT, SECRET, synthetic_cost


def test_header_verdict_and_coverage(results):
    html = render(results, CONTRACT)
    assert "http://127.0.0.1:9/business/api/v1" in html and "contract version 1" in html
    assert "2026-11-22T10:00:00+00:00" in html
    assert re.search(r'id="overall">failed<', html)
    assert re.search(r'id="coverage">1 / 4<', html)  # 6 requirements, 2 not testable / not specified


def test_parts_in_the_spec_order_each_with_a_bar(results):
    html = render(results, CONTRACT)
    slugs = re.findall(r'<section class="part" id="part-([a-z]+)"', html)
    assert slugs == [p["slug"] for p in CONTRACT.parts] and len(slugs) == 9
    assert html.count('class="bar"') == 9 * 2  # in the overview and in each part


def test_every_verdict_is_labelled(results):
    html = render(results, CONTRACT)
    for label in ("passed", "failed", "warning (approximate timing)", "needs operator", "not testable",
                  "not specified by the spec"):
        assert f">{label}</span>" in html, label
    assert "needs operator: cannot revoke_key" in html  # the skip reason
    assert "profile: fundSandbox" in html  # tests depending on a profile operation are marked


def test_a_failure_shows_expected_seen_transcript_and_request_id(results):
    html = render(results, CONTRACT)
    block = html[html.index('id="req-ERR-B"'):html.index('id="part-limits"')]
    assert "409 IDEMPOTENCY_KEY_REUSED" in block and "-&gt; 201" in block
    assert "<code>req_fail_42</code>" in block and "transcript (1 exchanges" in block
    assert 'href="#req-ERR-B"' in html  # listed among the failed requirements at the top


def test_split_message():
    from .conftest import FAILURE_MESSAGE

    parts = split_message(FAILURE_MESSAGE)
    assert parts["requirements"].startswith("[ERR-B]")
    assert parts["expected"] == "409 IDEMPOTENCY_KEY_REUSED"
    assert parts["seen"].startswith("POST ") and "x-request-id: req_fail_42" in parts["seen"]


def test_self_contained_and_escaped(results):
    results["requirements"][0]["quote"] = "<script>alert(1)</script>"
    html = render(results, CONTRACT)
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    assert not re.search(r'<(link|img|iframe)\b|\bsrc=|url\(|@import|https?://(?!127\.0\.0\.1)', html)
    assert html.count("<script>") == 1  # the inline filter script only


def test_the_redactor_runs_over_the_html(results):
    results["tests"][1]["message"] += f"\nkey {SECRET}"
    html = render(results, CONTRACT, Redactor([SECRET]))
    assert SECRET not in html


def test_the_gate_and_expected_failures_are_shown(results):
    from payconform.results import baseline

    entries = [baseline.Entry("suites/errors/test_replay.py::test_replay_conflict", "failed", "ticket PAY-12",
                              ["ERR-B"])]
    html = render(baseline.apply(results, entries, CONTRACT, "gate.yaml"), CONTRACT)
    gate = html[html.index('id="gate"'):html.index('id="filters"')]
    assert "gate.yaml" in gate and ": failed</b>" in gate and "unexpected skip" in gate
    assert re.search(r'id="overall">failed<', html)
    block = html[html.index('id="req-ERR-B"'):html.index('id="part-limits"')]
    assert ">expected failure</span>" in block and "baseline: ticket PAY-12" in block


def test_the_run_cost_and_requests_per_part_are_shown(results):
    results["cost"] = synthetic_cost()
    html = render(results, CONTRACT)
    top = html[html.index('id="run-cost"'):]
    top = re.sub(r"\s+", " ", top[:top.index("</div>")])
    for shown in ("1,234</b>requests", "fuzz 234", "floor 740 s", "wall 800 s", "wall/floor 1.081",
                  "1 unplanned 429s", "3 planned"):
        assert shown in top, shown
    assert 'id="over-limit"' not in top
    results["cost"]["over_limit"] = {"requests": 101, "credentials": ["rate_limit_key"]}
    tripped = render(results, CONTRACT)
    assert "101 of them over a limit on purpose (rate_limit_key)" in tripped[tripped.index('id="run-cost"'):]
    conventions = html[html.index('id="part-conventions"'):html.index('id="part-errors"')]
    assert '<span class="muted part-requests">400 requests</span>' in conventions
    assert '<span class="muted part-requests">600 requests</span>' in html[html.index('id="part-errors"'):]


def test_a_run_without_counts_shows_no_cost(results):
    html = render(results, CONTRACT)
    assert 'id="run-cost"' not in html and "part-requests" not in html


def test_a_test_naming_several_requirements_shows_its_transcript_once(results):
    failed = next(t for t in results["tests"] if t.get("transcript"))
    failed["requirements"] = ["ERR-B", "CONV-A"]
    results["requirements"] = [dict(r, tests=r["tests"] + [failed["nodeid"]]) if r["id"] == "CONV-A" else r
                               for r in results["requirements"]]
    html = render(results, CONTRACT)
    assert html.count("transcript (1 exchanges") == 2  # under both requirements ...
    assert html.count("<summary>transcript") == 1  # ... its exchanges once, under the first
    assert 'exchanges): under <a href="#req-ERR-B">ERR-B</a>' in html
