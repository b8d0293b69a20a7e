"""One verdict vocabulary and structured skip reasons.

results.json, the baseline and JUnit are interfaces users script against: every verdict they can hold is a
member of ``payconform.results.verdicts.Verdict`` (and of the results schema), and a skip made with
``payconform.results.skips.Needs`` reads back as the verdict and capability of its kind. No other module spells a
need's reason, so rewording one cannot change the report unnoticed.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from payconform import paths
from payconform.results.html import render
from payconform.results.records import ResultCollector, build_results
from payconform.results.skips import NOT_RUN, Kind, Needs, read, verdict_of
from payconform.results.unlock import SUPPLIES, capability
from payconform.results.verdicts import REQUIREMENT_VERDICTS, TEST_VERDICTS, Verdict, worst

from .conftest import CONTRACT, SCHEMA_PATH, synthetic_tests

ROOT = paths.PACKAGE_DIR.parent
VOCABULARY = {paths.PACKAGE_DIR / "results" / "skips.py", paths.PACKAGE_DIR / "results" / "verdicts.py"}

# one need of each kind, the reason the user sees, and the verdict and capability the report reads back
NEEDS = [
    (Needs(Kind.OPERATOR, "cannot issue_key"), "needs operator: cannot issue_key", "needs_operator", "operator"),
    (Needs(Kind.OPERATOR), "needs operator", "needs_operator", "operator"),
    (Needs(Kind.CLOCK), "needs clock", "needs_clock", "clock"),
    (Needs(Kind.CLOCK, note="a 90 s wait"), "needs clock (a 90 s wait)", "needs_clock", "clock"),
    (Needs(Kind.REAL_TIME, note="real time"), "needs --run-slow (real time)", "needs_slow", "real_time"),
    (Needs(Kind.MANY_REQUESTS, "on one key, [a] (b): c"), "needs --run-slow or a key pool: on one key, [a] (b): c",
     "needs_slow", "many_requests"),
    (Needs(Kind.CREDENTIAL, "read_only_key"), "needs read_only_key", "skipped", "read_only_key"),
    (Needs(Kind.CREDENTIAL, "signing_key_id"), "needs signing_key_id", "skipped", "signing_key_id"),
    (Needs(Kind.SIGNING_KEY), "needs signing_key", "skipped", "signing_key"),
    (Needs(Kind.SECOND_ORG), "needs second_org", "skipped", "second_org"),
    (Needs(Kind.RECEIVER, "no delivery arrived"), "needs receiver: no delivery arrived", "skipped", "receiver"),
    (Needs(Kind.PROFILE, "the target defaulted `chain`"), "needs profile: the target defaulted `chain`", "skipped",
     None),
    (Needs(Kind.STATE_URL, "cannot see"), "needs --state-url: cannot see", "skipped", None),
    (Needs(Kind.TARGET, "other_org_id"), "needs other_org_id", "skipped", None),
    (Needs(Kind.TARGET, "a target on this machine: x"), "needs a target on this machine: x", "skipped", None),
]


def test_every_kind_has_a_case() -> None:
    assert {need.kind for need, *_ in NEEDS} == set(Kind)


@pytest.mark.parametrize(("need", "reason", "verdict", "capable"), NEEDS, ids=lambda v: getattr(v, "reason", None))
def test_a_skip_reads_back_as_its_verdict(need: Needs, reason: str, verdict: str, capable: str | None) -> None:
    with pytest.raises(pytest.skip.Exception) as raised:
        need.skip()
    shown = raised.value.msg
    assert shown == reason == need.reason
    assert read(shown) == need
    collector = ResultCollector()
    collector.add(nodeid="t", when="setup", outcome="skipped", duration=0.0, blob=None, skip_reason=shown)
    row = collector.tests()[0]
    assert (row["outcome"], row["verdict"], row["skip_reason"]) == ("skipped", verdict, reason)
    assert capability(shown) == capable and (capable is None or capable in SUPPLIES)


def test_a_need_with_an_answer_added_keeps_its_kind() -> None:
    refused = Needs(Kind.CLOCK, "the target refuses a link expiring 5 s ahead").adding("(answered 400)")
    assert refused.reason == "needs clock: the target refuses a link expiring 5 s ahead (answered 400)"
    assert verdict_of(refused.reason) is Verdict.NEEDS_CLOCK


def test_other_skips_are_plain_or_not_run() -> None:
    assert read("fuzz phase off (--fuzz-budget 0)") is None and read(None) is None
    assert verdict_of("fuzz phase off (--fuzz-budget 0)") is Verdict.SKIPPED
    assert verdict_of(f"{NOT_RUN}: --max-duration reached") is Verdict.NOT_RUN


def test_the_vocabulary_is_the_schema_s() -> None:
    defs = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]
    assert list(defs["requirement_verdict"]["enum"]) == list(REQUIREMENT_VERDICTS) == [v.value for v in Verdict]
    assert set(defs["test_verdict"]["enum"]) == set(TEST_VERDICTS)
    assert {v.value for v in Verdict if not v.for_tests} == {"not_tested", "not_testable", "not_specified"}


def test_every_verdict_a_run_writes_is_in_the_vocabulary() -> None:
    tests = synthetic_tests() + [
        {"nodeid": f"t::{v}", "requirements": ["CONV-A"], "outcome": "skipped", "verdict": verdict_of(r).value,
         "skip_reason": r, "duration": 0.0} for v, r in (("slow", "needs --run-slow (real time)"),
                                                        ("clock", "needs clock"), ("plain", "static"))]
    data = build_results(run={}, tests=tests, contract=CONTRACT)
    written = {t["verdict"] for t in data["tests"]} | {r["verdict"] for r in data["requirements"]}
    assert written <= set(REQUIREMENT_VERDICTS)
    assert {t["verdict"] for t in data["tests"]} <= set(TEST_VERDICTS)


def test_a_verdict_s_meaning() -> None:
    assert [v for v in Verdict if v.covered] == [Verdict.PASSED]
    assert [v for v in Verdict if v.fails_gate] == [Verdict.FAILED]
    assert {v for v in Verdict if not v.testable} == {Verdict.NOT_TESTABLE, Verdict.NOT_SPECIFIED}
    assert [v for v in Verdict if v.chosen_by_run] == [Verdict.NEEDS_SLOW]
    assert [v.rank for v in Verdict] == list(range(len(Verdict)))
    assert worst(["passed", "needs_clock", "failed"]) is Verdict.FAILED
    assert worst(["needs_clock", "needs_operator"]) is Verdict.NEEDS_OPERATOR
    assert worst([]) is Verdict.SKIPPED and worst(["unknown"]) is Verdict.SKIPPED
    assert len({v.label for v in Verdict}) == len(Verdict)


def test_the_report_shows_every_verdict_s_label_and_colour(results) -> None:
    html = render(results, CONTRACT)
    for v in Verdict:
        assert f".v-{v.value} {{ background: {v.look.badge}; color: {v.look.text}; }}" in html
        assert f".b-{v.value} {{ background: {v.look.bar}; }}" in html
        assert f'<option value="{v.value}">{v.label}</option>' in html


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings (f-string parts included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def _sources() -> list[Path]:
    files = [*sorted((ROOT / "payconform").rglob("*.py")), *sorted((ROOT / "suites").rglob("*.py"))]
    return [p for p in files if p not in VOCABULARY]


def test_no_module_but_the_vocabulary_spells_a_skip_reason() -> None:
    """Skip reasons are ``Needs`` (and "not run" is ``skips.NOT_RUN``): a literal "needs operator" or
    "needs clock" anywhere else would be a verdict the report reads by accident."""
    bad = [f"{path.relative_to(ROOT)}:{line}: {text!r}" for path in _sources() for line, text in _strings(path)
           if text.startswith(("needs ", NOT_RUN))]
    assert not bad, "\n".join(bad)

