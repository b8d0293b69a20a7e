"""Versioning rule 6: the added schema fields, where an answer carries them, have the contract's type.

The recipient's screening and deletion fields (create, read and delete answers), the payout's `fee` and
`endUserId` (create answer and GET /orders/{payoutId}), the RegE disclosure's fields (a quote's, where the
profile's `sandbox.pricing.disclosure` names them), the `BANK_ACCOUNT_ALREADY_LINKED` error's
`existingRecipientId` / `existingMethodId` and the `PAYOUT_BATCH_DUPLICATE_REFERENCE` error's `originalBatchId`
are read from answers the spec says carry those resources (the run's own, where its other tests got them in
this worker). A field may be absent (the spec never says it is always there); present, it has the type the
contract gives it (`x-versioning-added: field`).
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status

from .._support.accounts import method_body
from .._support.batches import lines_to, read_only_runs, submit
from .._support.payouts import create_payout, payable_destination, read_payout
from .._support.pricing import pricing, quote
from .._support.profile import success
from .._support.recipients import add_method, added_method, create_recipient, post_recipient, recipient_body
from .._support.types import Unique
from .._support.versioning import SEEN, type_problems

# checked on the answers the run's other tests got (`versioning.SEEN`): after them, it sends least
pytestmark = pytest.mark.late


def _linked_twice(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """The account of one recipient added to another: 409 BANK_ACCOUNT_ALREADY_LINKED (one the run's other
    tests got in this worker, `versioning.SEEN`, else one made here)."""
    seen = SEEN.refusal("addBeneficiaryMethod", "BANK_ACCOUNT_ALREADY_LINKED")
    if seen is not None:
        return seen
    body = method_body(contract, "EUR")
    added_method(add_method(api, create_recipient(api, contract, unique)["id"], body))
    ex = add_method(api, create_recipient(api, contract, unique)["id"], body)
    expect_error(ex, 409, "BANK_ACCOUNT_ALREADY_LINKED")
    return ex


def _reference_taken(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """A run under a taken `externalReferenceId`: 409 PAYOUT_BATCH_DUPLICATE_REFERENCE (one the run's other tests
    got in this worker, `versioning.SEEN`, else one made here under a run made once for reading)."""
    seen = SEEN.refusal("createPayoutBatch", "PAYOUT_BATCH_DUPLICATE_REFERENCE")
    if seen is not None:
        return seen
    first = read_only_runs(api, contract, unique)[0]
    ex = submit(api, contract, lines_to(contract, payable_destination(api, contract, unique), unique, 1),
                first.external_reference_id)
    expect_error(ex, 409, "PAYOUT_BATCH_DUPLICATE_REFERENCE")
    return ex


@pytest.mark.req("VER-CHANGELOG-FIELDS")
@pytest.mark.needs("api_key", "profile")
def test_added_fields_have_the_contract_types(api: Api, contract: Contract, unique: Unique) -> None:
    """Recipient, payout, disclosure and error answers: each added field present has the contract's JSON type.
    Each answer is one the run's other tests got in this worker (`versioning.SEEN`), else one made here."""
    made: dict[str, Exchange] = {}

    def recipient() -> str:
        if "recipient" not in made:
            made["recipient"] = post_recipient(api, contract, recipient_body(contract, unique))
        return str(made["recipient"].json["id"])

    def payout() -> Exchange:
        if "payout" not in made:
            made["payout"] = create_payout(api, contract, unique)
        return made["payout"]

    answers = [
        ("Recipient", SEEN.success("getBeneficiary") or expect_status(
            api.op("getBeneficiary", recipientId=recipient()), 200, "reading the recipient")),
        ("Recipient", SEEN.success("deleteBeneficiary") or expect_status(
            api.op("deleteBeneficiary", recipientId=recipient()), 200, "deleting it")),
        ("WebhookPayout", SEEN.success("createPayout", success(contract, "createPayout") - {202}) or payout()),
        ("WebhookPayout", SEEN.success("getOrder") or read_payout(api, payout().json["payoutId"])),
        ("Error", _linked_twice(api, contract, unique)),
        ("Error", _reference_taken(api, contract, unique)),
    ]
    for schema, ex in answers:
        problems = type_problems(contract, schema, ex.json)
        expect(not problems, f"{ex.request.method} {ex.request.url}: " + "; ".join(problems), ex)
    priced = SEEN.success("pricePayout", success(contract, "pricePayout")) or quote(
        api, contract, payable_destination(api, contract, unique))
    disclosure = priced.json.get(pricing(contract)["disclosure"]) if isinstance(priced.json, dict) else None
    problems = type_problems(contract, "RegEDisclosure", disclosure)
    expect(not problems, "the quote's RegE disclosure: " + "; ".join(problems), priced)
