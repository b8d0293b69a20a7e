"""Failures with one cause are grouped, the cause said once; the report opens with an overview of the parts."""

from __future__ import annotations

import copy

from payconform.results.causes import MIN_GROUP, cause, failure_causes
from payconform.results.html import render

from .conftest import CONTRACT

ROUTE = "target answered: GET http://h/business/api/v1/x -> 404 ROUTE_NOT_FOUND \"no such route\""
REFUSED = "target answered: GET http://h/business/api/v1/y -> 401 UNAUTHORIZED \"unknown key\""


def test_causes_a_user_can_act_on() -> None:
    assert "does not serve" in cause(f"[X] ...\n{ROUTE}")
    assert "refused the run's credential (401 UNAUTHORIZED)" in cause(REFUSED)
    assert cause("expected: 401 UNAUTHORIZED\n" + REFUSED) is None  # a test that wanted the refusal
    assert "stopped answering" in cause("target stopped answering: 3 transport failures in a row")
    assert "receiver reachable" in cause("a delivery: not delivered within 25 s; none arrived at http://r/h: ...")
    assert "500 INTERNAL" in cause("target answered: POST http://h/z -> 500 INTERNAL")
    assert cause("target answered: GET http://h/z -> 200") is None
    assert cause(None) is None


def _failed(nodeid: str, message: str, reqs: list[str]) -> dict:
    return {"nodeid": nodeid, "verdict": "failed", "outcome": "failed", "message": message, "requirements": reqs}


def test_only_shared_causes_are_grouped_largest_first() -> None:
    rows = [_failed(f"t{i}", ROUTE, [f"R{i % 2}"]) for i in range(MIN_GROUP + 1)]
    rows += [_failed(f"u{i}", REFUSED, ["K"]) for i in range(MIN_GROUP)]
    rows += [_failed("v", "what happened: a field is missing", ["F"])]
    rows += [_failed(f"w{i}", "target answered: GET http://h -> 503 X", ["S"]) for i in range(MIN_GROUP - 1)]
    groups = failure_causes(rows)
    assert [len(g["tests"]) for g in groups] == [MIN_GROUP + 1, MIN_GROUP]
    assert groups[0]["requirements"] == ["R0", "R1"] and groups[1]["requirements"] == ["K"]


def test_the_report_opens_with_the_overview_and_the_causes(results) -> None:
    data = copy.deepcopy(results)
    victims = [t for t in data["tests"]][:MIN_GROUP]
    for t in victims:
        t.update(verdict="failed", outcome="failed", message=ROUTE)
    html = render(data, CONTRACT)
    overview, first_part = html.index('id="overview"'), html.index('id="part-')
    assert overview < first_part
    assert html.index('id="causes"') < first_part
    assert f"{len(victims)} failures</span> the target does not serve a route" in html
