"""A suite test demands nothing of an answer whose body the spec does not show, unless the profile names it.

The catalog of such answers is the profile's (`response: {source: profile, ...}` entries, read through
`Contract.unshown_answers()`); `suites/_support/profile.py` `answer_fields` says what each entry names. The
suite's sources are read (`demands.py`) for every field read of an exchange of a known operation; a read of an
unshown answer is fine only through `member` (whose failure names the profile entry) or after a `member` check
of the helper the exchange came from, and only of a field the entry names. At run time `member` refuses an
unnamed field (`NotNamed`) and names the entry when the field is missing.
"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import httpx
import pytest

from payconform.client import Exchange, RequestInfo
from payconform.contract import run_contract
from payconform.checks.expect import ContractViolation
from suites._support.answers import member
from suites._support.profile import NotNamed, answer_fields

from . import demands

ROOT = Path(__file__).resolve().parents[2]
NAMED = {"createPayout": {"payoutId"}}  # the fake catalog of the checker's unit tests


def _named() -> dict[str, set[str]]:
    contract = run_contract()
    return {op: answer_fields(contract, op) or set() for op in contract.unshown_answers()}


@pytest.fixture(scope="module")
def suite() -> dict[str, ast.Module]:
    return demands.parse(ROOT / "suites")


def _fake(source: str) -> dict[str, ast.Module]:
    return {"suites/fake/test_fake.py": ast.parse(textwrap.dedent(source))}


def test_the_catalog_comes_from_the_profile() -> None:
    """The payout operations the spec leaves "not shown" are in the catalog, each with the words that say so."""
    catalog = run_contract().unshown_answers()
    assert {"createPayout", "cancelPayout", "pricePayout", "sendPayout", "fundSandbox"} <= set(catalog)
    assert all(entry.get("why") for entry in catalog.values()), catalog
    assert "getOrder" not in catalog  # the payout as read through GET /orders is shown (Resources > Payout)


def test_the_suite_demands_only_what_the_profile_names(suite: dict[str, ast.Module]) -> None:
    bad = demands.unnamed_demands(suite, _named())
    assert not bad, ("suite code demands fields of answers the spec does not show without naming the profile "
                     "entry (read them with `member`, and list them in the entry's `response.fields`):\n"
                     + "\n".join(map(str, bad)))


def test_a_planted_violation_in_the_suite_is_found(suite: dict[str, ast.Module]) -> None:
    trees = {**suite, **_fake("""
        def test_planted(api, contract, unique):
            created = create_payout(api, contract, unique)
            assert created.json["status"] == "pending"
    """)}
    bad = demands.unnamed_demands(trees, _named())
    assert [(d.path, d.field, d.via) for d in bad] == [("suites/fake/test_fake.py", "status", "create_payout")]


@pytest.mark.parametrize("source, found", [
    ('ex = api.op("createPayout", json={})\nex.json["payoutId"]', ["payoutId"]),  # no check named the entry
    ('ex = expect_status(api.op("createPayout"), 201)\nbody = ex.json\nbody.get("status")', ["status"]),
    ('setup_call(api, contract, "createPayout").json.get("payoutId")', ["payoutId"]),
    ('member(api.op("createPayout"), "status")', ["status"]),  # through member, but not named
    ('member(api.op("createPayout"), "payoutId")', []),
    ('ex = api.op("getOrder", payoutId="p")\nex.json["status"]', []),  # a shown answer
    ('ex = api.op("createPayout")\nex = api.op("getOrder", payoutId="p")\nex.json["status"]', []),  # rebound
])
def test_the_checker_on_small_fakes(source: str, found: list[str]) -> None:
    trees = _fake("def test_x(api, contract):\n" + textwrap.indent(source, "    ") + "\n")
    assert [d.field for d in demands.unnamed_demands(trees, NAMED)] == found


def test_a_helper_vouches_only_for_what_it_checked_with_member() -> None:
    trees = _fake("""
        def made(api):
            ex = api.op("createPayout")
            expect(isinstance(member(ex, "payoutId"), str), "no id", ex)
            return ex

        def raw(api):
            return api.op("createPayout")

        def test_x(api):
            made(api).json["payoutId"]
            made(api).json["status"]
            raw(api).json["payoutId"]
    """)
    assert [(d.line, d.field, d.via) for d in demands.unnamed_demands(trees, NAMED)] == [(12, "status", "made"), (13, "payoutId", "raw")]


def _exchange(op_id: str, body: dict) -> Exchange:
    request = RequestInfo("POST", "http://127.0.0.1:1/business/api/v1/x", httpx.Headers(), b"{}")
    return Exchange(request, 201, httpx.Headers({"content-type": "application/json", "x-request-id": "r-1"}),
                    json.dumps(body).encode(), 0.01, op_id=op_id)


def test_member_refuses_a_field_the_profile_does_not_name() -> None:
    with pytest.raises(NotNamed, match=r"operations\.createPayout\.response"):
        member(_exchange("createPayout", {"status": "pending"}), "status")


def test_member_names_the_profile_entry_when_a_named_field_is_missing() -> None:
    with pytest.raises(ContractViolation, match=r"no `payoutId` \(profile `operations\.createPayout\.response`"):
        member(_exchange("createPayout", {"id": "p-1"}), "payoutId")
    assert member(_exchange("getOrder", {"status": "pending"}), "status") == "pending"
