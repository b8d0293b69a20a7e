"""The report shows beside each requirement how deep its verdict goes (contract/catalog/checks.yaml): the clauses
its tests are shown to check, as counts with a disclosure, what a run with a key alone cannot check, and why a
clause of the sentence has no mutant of its own."""

from __future__ import annotations

from pathlib import Path

import yaml

from payconform.contract import Contract
from payconform.results.html import render

from .conftest import CONTRACT, synthetic_results

RECORD = {"requirements": {
    "CONV-A": {"checked": [{"mutant": "money-as-number", "breaks": "Amounts are JSON numbers."},
                           {"mutant": "money-comma", "breaks": "Amounts use a decimal comma.", "with": ["ERR-B"]}],
               "not_checked": [], "other_clauses": ["the comma half is ERR-B's"]},
    "AUTH-OP": {"checked": [], "not_checked": ["requires the operator adapter: a key only the operator can revoke"]},
    "ERR-B": {"checked": [], "not_checked": []},
}}


def _contract(tmp_path: Path) -> Contract:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "checks.yaml").write_text(yaml.safe_dump(RECORD), encoding="utf-8")
    return Contract(requirements=CONTRACT.requirements, directory=tmp_path)


def _block(html: str, req_id: str) -> str:
    """The HTML of one requirement's entry."""
    return next(b for b in html.split('<div class="req ')[1:] if f'id="req-{req_id}"' in b)


def test_contract_checks_reads_the_record(tmp_path: Path) -> None:
    contract = _contract(tmp_path)
    assert contract.checks("CONV-A") == RECORD["requirements"]["CONV-A"]
    assert contract.checks("LIM-NS") is None and CONTRACT.checks("CONV-A") is None


def test_each_requirement_shows_its_record_beside_it(tmp_path: Path) -> None:
    html = render(synthetic_results(), _contract(tmp_path))
    conv = _block(html, "CONV-A")
    assert '<details class="depth"><summary>checked: 2 clauses</summary>' in conv
    assert "<code>money-as-number</code> Amounts are JSON numbers." in conv and "(with ERR-B)" in conv
    assert "the sentence's other clauses:<ul><li>the comma half is ERR-B&#39;s</li>" in conv
    auth = _block(html, "AUTH-OP")
    assert "checked: 0 clauses &middot; not checked: 1" in auth and "requires the operator adapter: a key only" in auth
    assert "checked: no clause shown able to fail" in _block(html, "ERR-B")
    assert 'class="depth' not in _block(html, "LIM-NS")  # no entry in the record: nothing is claimed
    assert 'class="depth' not in render(synthetic_results(), CONTRACT)
