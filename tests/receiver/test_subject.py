"""`subject: receiver` requirements: checked by the kit, never counted by `payconform run`."""

from __future__ import annotations

import yaml

from payconform import paths
from payconform.contract import RECEIVER, Contract, subject_of
from payconform.receiver.checks import CHECKS
from payconform.receiver.runner import receiver_contract

ROWS = yaml.safe_load((paths.contract_dir() / "requirements.yaml").read_text(encoding="utf-8"))["requirements"]
RECEIVER_IDS = {r["id"] for r in ROWS if subject_of(r) == RECEIVER}


def test_receiver_rows_are_the_rcv_ids() -> None:
    assert RECEIVER_IDS == {r["id"] for r in ROWS if r["id"].startswith("RCV-")}


def test_a_run_neither_counts_nor_shows_receiver_rows() -> None:
    run = Contract.load()
    assert not RECEIVER_IDS & set(run.requirements)
    assert len(run.requirements) == len(ROWS) - len(RECEIVER_IDS)


def test_the_kit_reports_only_receiver_rows_each_with_a_check() -> None:
    contract = receiver_contract()
    assert set(contract.requirements) == RECEIVER_IDS == {c.requirement for c in CHECKS}
    assert [p["slug"] for p in contract.parts] == ["events"]


def test_check_names_are_unique() -> None:
    assert len({c.name for c in CHECKS}) == len(CHECKS)
