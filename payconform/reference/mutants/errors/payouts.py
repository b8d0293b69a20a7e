"""Mutants of the Errors part for the payout, quote, funding and batch error tables.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ...resources import ledger
from ...resources.corridors import RATES
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ...resources.payout_view import awaiting_funds, payout_json
from ...resources.payouts import find
from ...resources.pricing import Price
from ..patching import Handler, around, body
from ..registry import mutant
from ..support.payouts import CONFIRM, refuse_expired, retype_batch_refusal, rewrite_reads, without_policy

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


@mutant("refused-payout-still-sent", reqs=["ERR-INSUFFICIENT-BALANCE", "ERR-PROVIDER-REJECTED"],
        doc="A payout the balance cannot cover or the network refuses answers its 400 but is sent all the same.")
def refused_payout_still_sent(ref: Reference) -> None:
    @around(ref, "createPayout")
    def create_payout(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            if err.type not in ("INSUFFICIENT_BALANCE", "PROVIDER_REJECTED"):
                raise
            amount, currency = Decimal(body(call)["sourceAmount"]), body(call)["sourceCurrency"]
            minimum, ref.pricing.minimum = ref.pricing.minimum, Decimal(0)
            ledger.post(call, type="adjustment", amount=amount, currency=currency)
            try:
                original(call)
            finally:
                ref.pricing.minimum = minimum
                ledger.post(call, type="adjustment", amount=-amount, currency=currency)
            err.keeps_writes = True
            raise


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


@mutant("payout-failed-reason-as-error-object", reqs=["ERR-ACCEPTED-FAILED-NOT-ERROR"],
        doc="A failed payout reads `status: failed` with its reason as an error object (`error.type`) instead of "
            "a `failureCode`.")
def payout_failed_reason_as_error_object(ref: Reference) -> None:
    def as_error(payout: dict[str, Any]) -> dict[str, Any]:
        if payout.get("status") == "failed" and "failureCode" in payout:
            payout["error"] = {"type": str(payout.pop("failureCode")).upper()}
        return payout

    rewrite_reads(ref, as_error)


@mutant("awaiting-funds-payout-not-cancelable", reqs=["ERR-PAYOUT-NOT-CANCELABLE"],
        doc="A payout awaiting the organization's own funds is refused PAYOUT_NOT_CANCELABLE like every other.")
def awaiting_funds_payout_not_cancelable(ref: Reference) -> None:
    @around(ref, "cancelPayout")
    def cancel_payout(original: Handler, call: Call) -> Reply:
        row = find(call, call.params["payoutId"])
        if row is not None and awaiting_funds(row):
            raise ApiError("PAYOUT_NOT_CANCELABLE")
        return original(call)


@mutant("plink-forged-404-distinct", reqs=["PLINK-404-ALIKE"],
        doc="A forged token of a real link answers a 404 saying its signature does not match, unlike an unknown one.")
def plink_forged_404_distinct(ref: Reference) -> None:
    verify = ref.payout_links.verify

    def telling(token: str) -> str | None:
        link_id = verify(token)
        claimed = token.rpartition(".")[0]
        if link_id is None and claimed and ref.store.one("SELECT id FROM payout_links WHERE id = ?", (claimed,)):
            raise ApiError("NOT_FOUND", "This payout link's signature does not match.")
        return link_id

    ref.payout_links.verify = telling  # type: ignore[method-assign]


@mutant("drift-exact-expectation-refused", reqs=["ERR-RATE-DRIFT-EXCEEDED"],
        doc="A quote delivering exactly `expectDestination` is refused RATE_DRIFT_EXCEEDED: only more passes.")
def drift_exact_expectation_refused(ref: Reference) -> None:
    @around(ref, "sendPayout")
    def send_payout(original: Handler, call: Call) -> Reply:
        expected = body(call).get("expectDestination")
        if isinstance(expected, str | int | float) and not isinstance(expected, bool):
            try:
                stricter = Decimal(str(expected)) + Decimal("0.01")
            except InvalidOperation:
                return original(call)
            call.replace_json({**body(call), "expectDestination": str(stricter)})
        return original(call)


@mutant("recipient-pricing-follows-indicative-capability", reqs=["ERR-INDICATIVE-PRICING-UNAVAILABLE"],
        doc="A corridor listing capabilities.indicativePricing false refuses pricing against a recipient too.")
def recipient_pricing_follows_indicative_capability(ref: Reference) -> None:
    @around(ref, "pricePayout")
    def price_payout(original: Handler, call: Call) -> Reply:
        currency = body(call).get("destinationCurrency")
        if isinstance(currency, str) and not ref.pricing.capable(currency, "indicativePricing"):
            raise ApiError("INDICATIVE_PRICING_UNAVAILABLE")
        return original(call)


@mutant("send-ignores-velocity-cap", reqs=["ERR-USE-POST-PAYOUTS"],
        doc="sendPayout holds to the approval threshold but not the velocity cap: a send over the cap is paid.")
def send_ignores_velocity_cap(ref: Reference) -> None:
    policy = ref.approvals.policy

    def threshold_only(store: Any, org_id: str, mode: str) -> tuple[Decimal | None, None, None]:
        return policy(store, org_id, mode)[0], None, None

    @around(ref, "sendPayout")
    def send_payout(original: Handler, call: Call) -> Reply:
        ref.approvals.policy = threshold_only  # type: ignore[method-assign]
        try:
            return original(call)
        finally:
            ref.approvals.policy = policy  # type: ignore[method-assign]


@mutant("payout-limit-unnamed", reqs=["ERR-PAYOUT-LIMIT-EXCEEDED"],
        doc="A payout over a limit answers 422 PAYOUT_LIMIT_EXCEEDED whose message does not name the limit.")
def payout_limit_unnamed(ref: Reference) -> None:
    check_network = ref.pricing.check_network

    def unnamed(amount: Decimal, currency: str, details_json: str) -> None:
        try:
            check_network(amount, currency, details_json)
        except ApiError as err:
            if err.type != "PAYOUT_LIMIT_EXCEEDED":
                raise
            raise ApiError("PAYOUT_LIMIT_EXCEEDED") from None

    ref.pricing.check_network = unnamed  # type: ignore[method-assign]


@mutant("batch-rejected-approval-confirms", reqs=["ERR-PAYOUT-BATCH-AWAITING-APPROVAL"],
        doc="Only an undecided approval holds a run: once an approver says no, the run is confirmed and paid.")
def batch_rejected_approval_confirms(ref: Reference) -> None:
    pending = ref.batches.approval_pending

    def undecided(call: Call, row: Any) -> bool:
        if not pending(call, row):
            return False
        approval = ref.approvals.find(ref.store, call.org_id, call.mode, row["approval_id"], call.now)
        return approval is None or approval["status"] == "pending"

    ref.batches.approval_pending = undecided  # type: ignore[method-assign]
