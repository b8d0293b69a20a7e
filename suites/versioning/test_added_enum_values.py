"""Versioning rule 7: the fields whose enum values the changelog lists as added (`x-versioning-added:
enum-values`) come back with the contract's JSON type where an answer carries them.

Membership is not checked: a value the contract does not list yet is an addition, safe to ignore
(Versioning rule 2). Balance history's `type` and `status` are read after a sandbox top-up (which adds an
entry); method details' `kind` from a new recipient's method; funding accounts' `settlesTo` from their list.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_status

from .._support.balance import top_up
from .._support.profile import items
from .._support.recipients import create_recipient
from .._support.types import Unique
from .._support.versioning import type_problems


KINDS = ("enum-values",)


@pytest.mark.smoke
@pytest.mark.req("VER-CHANGELOG-ENUMS")
@pytest.mark.needs("api_key", "profile")
def test_added_enum_fields_have_the_contract_types(api: Api, contract: Contract, unique: Unique) -> None:
    """Balance history entries after a top-up (`type`, `status`), a method's details (`kind`) and the funding
    accounts (`settlesTo`)."""
    top_up(api, contract, "12.34")
    history = expect_status(api.op("getBalanceHistory"), 200, "reading balance history")
    entries = history.json.get("entries") if isinstance(history.json, dict) else None
    expect(isinstance(entries, list) and entries, f"no history entry after a sandbox top-up: {history.json!r}", history)
    problems = [p for entry in entries for p in type_problems(contract, "BalanceHistoryEntry", entry, KINDS)]
    expect(not problems, "balance history: " + "; ".join(problems), history)
    created = create_recipient(api, contract, unique)
    details = expect_status(api.op("getBeneficiaryMethodDetails", recipientId=created["id"],
                                   methodId=created["paymentMethods"][0]["id"]), 200, "reading a method's details")
    problems = type_problems(contract, "MethodDetails", details.json, KINDS)
    expect(not problems, "method details: " + "; ".join(problems), details)
    funding = expect_status(api.op("getFundingAccounts"), 200, "listing the funding accounts")
    problems = [p for account in items(contract, "getFundingAccounts", funding)
                for p in type_problems(contract, "FundingAccount", account, KINDS)]
    expect(not problems, "funding accounts: " + "; ".join(problems), funding)
