"""contract/catalog/checks.yaml, the record of how deep each verdict goes, is current and complete.

The record is written by the reference's command line from its mutants and requirements.yaml; the report reads
it through `Contract.checks`. A stale file would claim clauses no mutant breaks any more, or hide new ones.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from payconform.contract import Contract
from payconform.reference import mutants
from payconform.reference.__main__ import main
from payconform.reference.checks_record import COMMAND, RECORD, record, text

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_DIR = ROOT / "contract"


def _suite_requirement_ids() -> set[str]:
    """The ids the suites' `@pytest.mark.req(...)` markers name literally."""
    found: set[str] = set()
    for path in (ROOT / "suites").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "req"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "mark"):
                found |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return found


def test_the_committed_record_is_current() -> None:
    committed, fresh = (CONTRACT_DIR / RECORD).read_text(encoding="utf-8"), text(CONTRACT_DIR, mutants.MUTANTS.values())
    if committed != fresh:
        old, new = (yaml.safe_load(t)["requirements"] for t in (committed, fresh))
        changed = sorted(r for r in old.keys() | new.keys() if old.get(r) != new.get(r))
        pytest.fail(f"contract/{RECORD} is stale (entries that differ: {', '.join(changed) or 'none, the header'}):"
                    f" refresh it with `{COMMAND}`", pytrace=False)


def test_every_requirement_of_the_server_has_a_record_and_every_mutant_is_in_it() -> None:
    contract = Contract.load(CONTRACT_DIR)
    missing = sorted(r for r in {*contract.requirements, *_suite_requirement_ids()} if contract.checks(r) is None)
    assert not missing, f"requirements with no record in contract/{RECORD} (refresh it with `{COMMAND}`): {missing}"
    listed = {c["mutant"] for r in contract.requirements for c in contract.checks(r)["checked"]}
    assert listed == set(mutants.MUTANTS), (
        f"mutants missing from contract/{RECORD} (or naming no requirement of the server; refresh it with"
        f" `{COMMAND}`): {sorted(set(mutants.MUTANTS) ^ listed)}")


def test_not_checked_says_what_a_key_alone_lacks_and_why() -> None:
    reqs = [
        {"id": "A", "testable": True, "needs": ["api_key", "profile", "webhook_receiver", "second_org", "operator"],
         "notes": "Checked by reading it twice. Needs: an organization nobody else writes to."},
        {"id": "B", "testable": True, "needs": ["api_key", "live_key", "real_time"]},
        {"id": "C", "testable": False, "reason": "not shown", "notes": "The profile supplies them."},
        {"id": "D", "testable": False, "reason": "dashboard-only behaviour"},
        {"id": "R", "subject": "receiver", "testable": True, "needs": ["webhook_receiver"]},
        {"id": "E", "testable": True, "needs": ["api_key"], "operator_clauses": "holds and  their release",
         "unmutated": "the other  half is F's"},
    ]
    out = record(reqs, [mutants.Mutant("m", ("A", "B"), "A breaks.", lambda ref: None, "mutant")])
    assert set(out) == {"A", "B", "C", "D", "E"}
    assert out["A"] == {"checked": [{"mutant": "m", "breaks": "A breaks.", "with": ["B"]}],
                        "not_checked": ["requires a second organization (`other_org_id`)",
                                        "requires the operator adapter: an organization nobody else writes to."]}
    assert out["B"]["not_checked"] == ["requires a live key (`credentials.live_key`)",
                                       "requires `--run-slow`: it waits in real time"]
    assert out["C"] == {"checked": [], "not_checked": ["not specified by the spec — The profile supplies them."]}
    assert out["D"]["not_checked"] == ["not testable over the API: dashboard-only behaviour"]
    assert out["E"]["not_checked"] == ["requires the operator adapter for: holds and their release"]
    assert out["E"]["other_clauses"] == ["the other half is F's"] and "other_clauses" not in out["A"]


def test_the_command_line_writes_the_record(tmp_path: Path, capsys) -> None:
    (tmp_path / "catalog").mkdir()
    (tmp_path / "requirements.yaml").write_text(yaml.safe_dump({"requirements": [
        {"id": "IDEM-REPLAY", "testable": True, "needs": ["api_key"]}]}), encoding="utf-8")
    assert main(["--write-checks", str(tmp_path)]) == 0
    assert str(tmp_path / RECORD) in capsys.readouterr().out
    written = Contract(directory=tmp_path).checks("IDEM-REPLAY")
    assert written is not None and written["not_checked"] == []
    aimed = sorted((m for m in mutants.MUTANTS.values() if "IDEM-REPLAY" in m.reqs), key=lambda m: m.name)
    assert [c["mutant"] for c in written["checked"]] == [m.name for m in aimed]
    assert [c["breaks"] for c in written["checked"]] == [m.doc for m in aimed]
