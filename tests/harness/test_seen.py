"""The answers the run already got (`suites/_support/versioning.py`, `Seen`): kept per operation only where they
show what any answer of it would (a documented success at the contract path, a documented refusal), never
breaking the request they watch."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from suites._support.versioning import Seen

BASE = "http://127.0.0.1:1/business/api/v1"


def _ex(op_id: str | None, path: str, status: int = 200, answer: Any = None) -> Any:
    return SimpleNamespace(op_id=op_id, status=status, json=answer, request=SimpleNamespace(url=BASE + path + "?x=1"))


def test_a_documented_success_at_the_contract_path_is_kept_first_per_status() -> None:
    seen = Seen()
    first = _ex("getBeneficiary", "/recipients/org1/rcp_1")
    seen.note(first)
    seen.note(_ex("getBeneficiary", "/recipients/org1/rcp_2"))
    assert seen.success("getBeneficiary") is first
    assert seen.success("getBeneficiary", {201}) is None


def test_what_shows_nothing_of_the_operation_is_left_out() -> None:
    seen = Seen()
    seen.note(_ex("getBeneficiary", "/recipients/org1/external/x"))  # another operation's path
    seen.note(_ex("getBeneficiary", "/recipients/org1/rcp_1", status=299))  # a status its contract does not list
    seen.note(_ex(None, "/recipients/org1/rcp_1"))  # a raw request: no operation
    seen.note(_ex("noSuchOperation", "/recipients/org1/rcp_1"))
    seen.note(SimpleNamespace())  # not an exchange at all: an observer never raises
    assert seen.successes == {} and seen.refusals == {}


def test_a_documented_refusal_is_kept_by_its_type() -> None:
    seen = Seen()
    refused = _ex("addBeneficiaryMethod", "/recipients/org1/rcp_1/methods", 409,
                  {"type": "BANK_ACCOUNT_ALREADY_LINKED", "requestId": "req_1"})
    seen.note(refused)
    assert seen.refusal("addBeneficiaryMethod", "BANK_ACCOUNT_ALREADY_LINKED") is refused
    assert seen.refusal("addBeneficiaryMethod", "IDEMPOTENCY_KEY_CONFLICT") is None
    assert seen.success("addBeneficiaryMethod") is None
