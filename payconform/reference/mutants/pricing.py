"""Mutants of pricing and of the sending rules issue 3's pricing work made reachable: quotes (drift,
verification, expiry, capabilities, disclosure), the network's sandbox refusals and the wallet
(`ref.pricing`), the discovery reads, and the keys of add-method and funding confirmation.

Each patches `ref.pricing` or wraps one operation's handler on this server instance only.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ..corridors import RATES
from ..errors import ApiError
from ..operation import Call, Reply
from ..pricing import Price
from . import mutant
from .approvals import without_policy
from .funding import CONFIRM, around, good_hash, send_hash, sent_hash

if TYPE_CHECKING:
    from ..reference import Reference

Handler = Callable[[Call], Reply]


def _rewrite_answer(ref: Reference, op_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The 2xx answers of `op_id` go through `change`."""
    @around(ref, op_id)
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        return dataclasses.replace(reply, body=change(dict(reply.body)))


def _capability_ignored(capability: str) -> Callable[[Reference], None]:
    def patch(ref: Reference) -> None:
        capable = ref.pricing.capable
        ref.pricing.capable = lambda currency, name: name == capability or capable(currency, name)  # type: ignore[method-assign]
    return patch


def _key_optional(op_id: str) -> Callable[[Reference], None]:
    def patch(ref: Reference) -> None:
        ref.operations[op_id] = dataclasses.replace(ref.operations[op_id], idempotency="optional")
    return patch


@mutant("quote-drift-unchecked", reqs=["ERR-RATE-DRIFT-EXCEEDED"],
        doc="sendPayout ignores `expectDestination`: a quote delivering less than expected is sent.")
def _(ref: Reference) -> None:
    @around(ref, "sendPayout")
    def _(original: Handler, call: Call) -> Reply:
        body = call.json()
        if isinstance(body, dict):
            call._json = {k: v for k, v in body.items() if k != "expectDestination"}
        return original(call)


@mutant("quote-signature-unchecked", reqs=["ERR-QUOTE-UNVERIFIABLE"],
        doc="A quote id whose signature does not match its terms is sent as if it were genuine.")
def _(ref: Reference) -> None:
    verify = ref.pricing.verify

    def unchecked(quote_id: Any, org_id: str, mode: str) -> dict[str, Any]:
        if isinstance(quote_id, str) and quote_id.startswith("qt_") and "." in quote_id:
            payload = quote_id[3:].split(".", 1)[0]
            quote_id = f"qt_{payload}.{ref.pricing.sign(payload)}"
        return verify(quote_id, org_id, mode)

    ref.pricing.verify = unchecked  # type: ignore[method-assign]


@mutant("quote-not-positive-priced", reqs=["ERR-QUOTE-NOT-POSITIVE"],
        doc="An amount the fee eats is quoted with 0.00 arriving instead of QUOTE_NOT_POSITIVE.")
def _(ref: Reference) -> None:
    price = ref.pricing.price

    def priced(source_currency: str, destination_currency: str, **amounts: Any) -> Price:
        try:
            return price(source_currency, destination_currency, **amounts)
        except ApiError as err:
            if err.type != "QUOTE_NOT_POSITIVE":
                raise
            return Price(amounts["source_amount"], source_currency, Decimal("0.00"), destination_currency,
                         ref.pricing.fee, RATES[destination_currency])

    ref.pricing.price = priced  # type: ignore[method-assign]


mutant("exact-output-always", reqs=["ERR-EXACT-OUTPUT-UNSUPPORTED"],
       doc="Every corridor prices a receiving amount, including one listing capabilities.exactOutput false.")(
    _capability_ignored("exactOutput"))
mutant("indicative-pricing-always", reqs=["ERR-INDICATIVE-PRICING-UNAVAILABLE"],
       doc="Every corridor gives indicative quotes, including one listing capabilities.indicativePricing false.")(
    _capability_ignored("indicativePricing"))


@mutant("quote-never-expires", reqs=["ERR-BAD-REQUEST"],
        doc="A quote sent after its expiresAt is still executed instead of 400 BAD_REQUEST.")
def _(ref: Reference) -> None:
    ref.pricing.expired = lambda terms, now: False  # type: ignore[method-assign]


@mutant("send-ignores-approval-policy", reqs=["ERR-USE-POST-PAYOUTS"],
        doc="sendPayout pays a quote an approval threshold applies to instead of 403 USE_POST_PAYOUTS.")
def _(ref: Reference) -> None:
    without_policy(ref, "sendPayout")


@mutant("rege-lines-unsigned", reqs=["DISC-REGE-SHAPE"],
        doc="The RegEDisclosure lines of quotes and sends carry no `sign`.")
def _(ref: Reference) -> None:
    def unsigned(body: dict[str, Any]) -> dict[str, Any]:
        disclosure = body.get("disclosure")
        if isinstance(disclosure, dict):
            lines = [{k: v for k, v in line.items() if k != "sign"} for line in disclosure.get("lines", [])]
            body["disclosure"] = {**disclosure, "lines": lines}
        return body

    for op_id in ("pricePayout", "sendPayout"):
        _rewrite_answer(ref, op_id, unsigned)


@mutant("corridor-minimum-unchecked", reqs=["ERR-PROVIDER-REJECTED"],
        doc="A payout below the corridor minimum is sent instead of 400 PROVIDER_REJECTED.")
def _(ref: Reference) -> None:
    ref.pricing.minimum = Decimal(0)


@mutant("single-limit-unchecked", reqs=["ERR-PAYOUT-LIMIT-EXCEEDED"],
        doc="A payout over the single payout limit is not refused with 422 PAYOUT_LIMIT_EXCEEDED.")
def _(ref: Reference) -> None:
    ref.pricing.single_limit = Decimal("1e15")


@mutant("refused-recipient-paid", reqs=["ERR-PAYOUT-REFUSED"],
        doc="The recipient the network refuses for good is paid instead of 422 PAYOUT_REFUSED.")
def _(ref: Reference) -> None:
    check_network = ref.pricing.check_network

    def lenient(amount: Decimal, currency: str, details_json: str) -> None:
        try:
            check_network(amount, currency, details_json)
        except ApiError as err:
            if err.type != "PAYOUT_REFUSED":
                raise

    ref.pricing.check_network = lenient  # type: ignore[method-assign]


@mutant("wallet-always-provisioned", reqs=["ERR-WALLET-NOT-PROVISIONED"],
        doc="An organization without an EVM wallet makes wallet payouts instead of 400 WALLET_NOT_PROVISIONED.")
def _(ref: Reference) -> None:
    ref.pricing.has_wallet = lambda store, org_id: True  # type: ignore[method-assign]


@mutant("provider-unavailable-keeps-key",
        reqs=["ERR-PAYOUT-ACCOUNT-PROVIDER-UNAVAILABLE", "RCP-ADD-METHOD-PROVIDER-UNAVAILABLE"],
        doc="503 PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE keeps the key: the retry replays the 503 instead of running.")
def _(ref: Reference) -> None:
    releases = ref.idempotency.releases
    ref.idempotency.releases = (  # type: ignore[method-assign]
        lambda err: err.type != "PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE" and releases(err))


mutant("add-method-key-optional", reqs=["RCP-ADD-METHOD-IDEM"],
       doc="Adding a payment method without an Idempotency-Key runs instead of 400 IDEMPOTENCY_KEY_REQUIRED.")(
    _key_optional("addBeneficiaryMethod"))
mutant("funding-key-optional", reqs=["FUND-IDEM-HEADERS"],
       doc="Confirming funding without an Idempotency-Key runs instead of 400 IDEMPOTENCY_KEY_REQUIRED.")(
    _key_optional(CONFIRM))


@mutant("solana-funding-unverified", reqs=["FUND-SOLANA"],
        doc="Funding of a payout to a Solana wallet is accepted without the sandbox chain read (0001 funds it).")
def _(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def _(original: Handler, call: Call) -> Reply:
        row = ref.store.one("SELECT m.details FROM payouts p JOIN payment_methods m"
                            " ON m.destination_account_id = p.destination_account_id WHERE p.id = ?",
                            (call.params["payoutId"],))
        if row is not None and json.loads(row["details"]).get("chain") == "solana" and isinstance(sent_hash(call), str):
            send_hash(call, good_hash())
        return original(call)


@mutant("funding-accounts-unsettled", reqs=["DISC-FUNDING-ACCOUNT"],
        doc="Funding accounts are listed without `settlesTo`.")
def _(ref: Reference) -> None:
    _rewrite_answer(ref, "getFundingAccounts", lambda body: {
        **body, "data": [{k: v for k, v in a.items() if k != "settlesTo"} for a in body["data"]]})


@mutant("payment-reasons-one-missing", reqs=["DISC-PAYMENT-REASONS"],
        doc="GET /payment-reasons leaves one of the 18 listed values out.")
def _(ref: Reference) -> None:
    _rewrite_answer(ref, "listPaymentReasons", lambda body: {**body, "data": body["data"][:-1]})
