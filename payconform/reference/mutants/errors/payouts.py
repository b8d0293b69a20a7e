"""Mutants of the Errors part for the payout, quote, funding and batch error tables.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ...resources import ledger
from ...resources.corridors import RATES
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ...resources.payout_view import payout_json
from ...resources.payouts import find
from ...resources.pricing import Price
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.payouts import CONFIRM, refuse_expired, retype_batch_refusal, without_policy

if TYPE_CHECKING:
    from ...reference import Reference


def _ignore_capability(ref: Reference, capability: str) -> None:
    """Every corridor reads as having `capability`."""
    capable = ref.pricing.capable
    ref.pricing.capable = (  # type: ignore[method-assign]
        lambda currency, name: name == capability or capable(currency, name))


@mutant("batch-not-found-generic", reqs=["ERR-BATCH-NOT-FOUND", "BATCH-CANCEL-NOT-FOUND"],
        doc="An unknown batch id answers 404 NOT_FOUND instead of BATCH_NOT_FOUND.")
def batch_not_found_generic(ref: Reference) -> None:
    retype_batch_refusal(ref, "BATCH_NOT_FOUND", lambda err: ApiError("NOT_FOUND", "No such batch."))


@mutant("mass-payouts-opt-out-ignored", reqs=["ERR-MASS-PAYOUTS-DISABLED"],
        doc="An organization that opted out of batches (`mass_payouts` off) can still submit runs.")
def mass_payouts_opt_out_ignored(ref: Reference) -> None:
    ref.batches.enabled = lambda store, org_id: True  # type: ignore[method-assign]


@mutant("batch-approval-ignored", reqs=["ERR-PAYOUT-BATCH-AWAITING-APPROVAL"],
        doc="A run over the approval threshold is confirmed and paid without its approvers.")
def batch_approval_ignored(ref: Reference) -> None:
    ref.batches.approval_pending = lambda call, row: False  # type: ignore[method-assign]


@mutant("funding-not-applicable-as-not-fundable", reqs=["ERR-FUNDING-NOT-APPLICABLE"],
        doc="Funding a balance-funded payout answers 400 PAYOUT_NOT_FUNDABLE instead of 501 FUNDING_NOT_APPLICABLE.")
def funding_not_applicable_as_not_fundable(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "FUNDING_NOT_APPLICABLE":
                raise ApiError("PAYOUT_NOT_FUNDABLE") from None
            raise


@mutant("funding-canceled-payout-accepted", reqs=["ERR-PAYOUT-NOT-FUNDABLE", "FUND-ERRORS"],
        doc="Confirming funding of a canceled payout answers 200 with the payout.")
def funding_canceled_payout_accepted(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type == "PAYOUT_NOT_FUNDABLE":
                return Reply(200, payout_json(find(call, call.params["payoutId"])))
            raise


@mutant("funding-completed-payout-accepted", reqs=["ERR-PAYOUT-NOT-FUNDABLE", "FUND-ERRORS"],
        doc="Confirming funding of a completed payout answers 200 with the payout; only a canceled one is refused.")
def funding_completed_payout_accepted(ref: Reference) -> None:
    @around(ref, CONFIRM)
    def confirm_payout_funding(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            row = find(call, call.params["payoutId"]) if err.type == "PAYOUT_NOT_FUNDABLE" else None
            if row is not None and row["status"] == "completed":
                return Reply(200, payout_json(row))
            raise


@mutant("cancel-any-pending", reqs=["ERR-PAYOUT-NOT-CANCELABLE"],
        doc="A balance-funded pending payout can be canceled too.")
def cancel_any_pending(ref: Reference) -> None:
    @around(ref, "cancelPayout")
    def cancel_payout(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type != "PAYOUT_NOT_CANCELABLE":
                raise
            ref.store.run("UPDATE payouts SET status = 'canceled', funds_returned = 0 WHERE id = ?",
                          (call.params["payoutId"],))
            return Reply(200, payout_json(find(call, call.params["payoutId"])))


@mutant("plink-expired-404-distinct", reqs=["PLINK-404-ALIKE"],
        doc="An expired link's 404 says it expired, telling it apart from forged and unknown tokens.")
def plink_expired_404_distinct(ref: Reference) -> None:
    refuse_expired(ref, lambda: ApiError("NOT_FOUND", "This payout link has expired."))


@mutant("payout-failed-read-as-error", reqs=["ERR-ACCEPTED-FAILED-NOT-ERROR"],
        doc="Reading a payout that failed after it was accepted answers an error body instead of the payout.")
def payout_failed_read_as_error(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            reply = original(call)
            if reply.body.get("status") == "failed":
                raise ApiError("BAD_REQUEST", "The payout failed.")
            return reply
        return handler

    for op_id in ("getOrder", "getPayout"):
        ref.wrap_handler(op_id, wrap)


@mutant("insufficient-balance-overdraws", reqs=["ERR-INSUFFICIENT-BALANCE"],
        doc="A payout above the balance is paid anyway, overdrawing the balance.")
def insufficient_balance_overdraws(ref: Reference) -> None:
    def wrap(original: Handler) -> Handler:
        def handler(call: Call) -> Reply:
            try:
                return original(call)
            except ApiError as err:
                if err.type != "INSUFFICIENT_BALANCE":
                    raise
                body = call.json()
                ledger.post(call, type="adjustment", amount=Decimal(body["sourceAmount"]),
                            currency=body["sourceCurrency"])
                return original(call)
        return handler

    ref.wrap_handler("createPayout", wrap)


@mutant("quote-drift-unchecked", reqs=["ERR-RATE-DRIFT-EXCEEDED"],
        doc="sendPayout ignores `expectDestination`: a quote delivering less than expected is sent.")
def quote_drift_unchecked(ref: Reference) -> None:
    @around(ref, "sendPayout")
    def send_payout(original: Handler, call: Call) -> Reply:
        body = call.json()
        if isinstance(body, dict):
            call.replace_json({k: v for k, v in body.items() if k != "expectDestination"})
        return original(call)


@mutant("quote-signature-unchecked", reqs=["ERR-QUOTE-UNVERIFIABLE"],
        doc="A quote id whose signature does not match its terms is sent as if it were genuine.")
def quote_signature_unchecked(ref: Reference) -> None:
    verify = ref.pricing.verify

    def unchecked(quote_id: Any, org_id: str, mode: str) -> dict[str, Any]:
        if isinstance(quote_id, str) and quote_id.startswith("qt_") and "." in quote_id:
            payload = quote_id[3:].split(".", 1)[0]
            quote_id = f"qt_{payload}.{ref.pricing.sign(payload)}"
        return verify(quote_id, org_id, mode)

    ref.pricing.verify = unchecked  # type: ignore[method-assign]


@mutant("quote-not-positive-priced", reqs=["ERR-QUOTE-NOT-POSITIVE"],
        doc="An amount the fee eats is quoted with 0.00 arriving instead of QUOTE_NOT_POSITIVE.")
def quote_not_positive_priced(ref: Reference) -> None:
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


@mutant("exact-output-always", reqs=["ERR-EXACT-OUTPUT-UNSUPPORTED"],
        doc="Every corridor prices a receiving amount, including one listing capabilities.exactOutput false.")
def exact_output_always(ref: Reference) -> None:
    _ignore_capability(ref, "exactOutput")


@mutant("indicative-pricing-always", reqs=["ERR-INDICATIVE-PRICING-UNAVAILABLE"],
        doc="Every corridor gives indicative quotes, including one listing capabilities.indicativePricing false.")
def indicative_pricing_always(ref: Reference) -> None:
    _ignore_capability(ref, "indicativePricing")


@mutant("send-ignores-approval-policy", reqs=["ERR-USE-POST-PAYOUTS"],
        doc="sendPayout pays a quote an approval threshold applies to instead of 403 USE_POST_PAYOUTS.")
def send_ignores_approval_policy(ref: Reference) -> None:
    without_policy(ref, "sendPayout")


@mutant("corridor-minimum-unchecked", reqs=["ERR-PROVIDER-REJECTED"],
        doc="A payout below the corridor minimum is sent instead of 400 PROVIDER_REJECTED.")
def corridor_minimum_unchecked(ref: Reference) -> None:
    ref.pricing.minimum = Decimal(0)


@mutant("single-limit-unchecked", reqs=["ERR-PAYOUT-LIMIT-EXCEEDED"],
        doc="A payout over the single payout limit is not refused with 422 PAYOUT_LIMIT_EXCEEDED.")
def single_limit_unchecked(ref: Reference) -> None:
    ref.pricing.single_limit = Decimal("1e15")


@mutant("refused-recipient-paid", reqs=["ERR-PAYOUT-REFUSED"],
        doc="The recipient the network refuses for good is paid instead of 422 PAYOUT_REFUSED.")
def refused_recipient_paid(ref: Reference) -> None:
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
def wallet_always_provisioned(ref: Reference) -> None:
    ref.pricing.has_wallet = lambda store, org_id: True  # type: ignore[method-assign]


@mutant("provider-unavailable-keeps-key",
        reqs=["ERR-PAYOUT-ACCOUNT-PROVIDER-UNAVAILABLE", "RCP-ADD-METHOD-PROVIDER-UNAVAILABLE"],
        doc="503 PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE keeps the key: the retry replays the 503 instead of running.")
def provider_unavailable_keeps_key(ref: Reference) -> None:
    releases = ref.idempotency.releases
    ref.idempotency.releases = (  # type: ignore[method-assign]
        lambda err: err.type != "PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE" and releases(err))
