"""The spec's error types and the ApiError exception every refusal travels as.

The reference keeps its own copy of the spec's Errors tables (type -> HTTP status, meaning) instead of
reading ``contract/``: it is an independent implementation, so a mistake in the contract data cannot make
the server agree with it by construction.
"""

from __future__ import annotations

from typing import Any

# type -> (status, meaning). The meaning doubles as the default `detail`.
ERRORS: dict[str, tuple[int, str]] = {
    # Request errors
    "VALIDATION_ERROR": (400, "The request failed validation; fix the fields named in errors."),
    "UNAUTHORIZED": (401, "The API key is missing, malformed, unknown, revoked or incomplete."),
    "FORBIDDEN": (403, "This key cannot access that organization or operation."),
    "NOT_FOUND": (404, "No such resource in this organization."),
    "ROUTE_NOT_FOUND": (404, "No route matches; payouts are sent to /payouts and read from /orders."),
    "RATE_LIMITED": (429, "Too many requests; wait for Retry-After."),
    "BAD_REQUEST": (400, "The request cannot be carried out."),
    "PROVIDER_REJECTED": (400, "The network refused the payout before submission."),
    "CONFLICT": (409, "The resource changed or conflicts with another; re-read it."),
    "ACCOUNT_BLOCKED": (403, "The organization is suspended."),
    "LIVE_KEY_ORG_NOT_APPROVED": (403, "A live key cannot write before the organization is verified."),
    "INSUFFICIENT_BALANCE": (400, "The balance does not cover this payout; nothing was sent."),
    "CRYPTO_PAYOUTS_DISABLED": (400, "Use a key with scopes write and crypto_payouts."),
    "WALLET_NOT_PROVISIONED": (400, "No EVM wallet to pay a wallet recipient."),
    "HISTORY_TOO_LARGE": (413, "Too many orders for balance history; page balance transactions."),
    "ORDERS_TEMPORARILY_UNAVAILABLE": (503, "A network read failed; try again."),
    "INTERNAL": (500, "Internal error; nothing was recorded and the idempotency key was released."),
    "PAYOUT_LINKS_UNAVAILABLE": (503, "Hosted payout links are not configured."),
    "CORRIDOR_UNAVAILABLE": (400, "The corridor is not available."),
    "DEVELOPER_FEATURE_DISABLED": (403, "Developer tools are off for this organization."),
    "INSUFFICIENT_SCOPE": (403, "This key does not have the scope this operation needs."),
    "LIVE_MODE_UNSUPPORTED": (400, "This route is sandbox-only; use a test key."),
    # API key errors
    "KEY_EXPIRED": (401, "The API key has expired; issue a new key."),
    "KEY_IP_NOT_ALLOWED": (401, "This key is pinned to other source addresses."),
    # Signature errors (Authentication > Mode B rule 6). The spec shows only the challenge's 202; the others
    # answer 401 here, like every refusal of a credential (nothing ran).
    "SIGNATURE_CHALLENGE": (202, "Sign payloadToSign and resend the same request with X-Svc-Request-Id and "
                                 "X-Svc-Signature; nothing ran."),
    "SIGNATURE_REQUIRED": (401, "A signed request needs X-Svc-Signature, X-Svc-Timestamp and X-Svc-Nonce."),
    "SIGNATURE_INVALID": (401, "The request signature is not valid."),
    "SIGNATURE_REPLAYED": (401, "This signed request was already used; it did not run again."),
    "SIGNATURE_TIMESTAMP_SKEW": (401, "The signed timestamp is more than five minutes from server time."),
    # Idempotency errors
    "IDEMPOTENCY_KEY_REQUIRED": (400, "This route requires an Idempotency-Key header."),
    "IDEMPOTENCY_KEY_INVALID": (400, "Idempotency-Key must be 1-255 characters of A-Z a-z 0-9 _ . : -"),
    "IDEMPOTENCY_KEY_CONFLICT": (409, "This idempotency key was used with a different request."),
    "IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS": (409, "The first request with this key is still running."),
    "IDEMPOTENCY_UNAVAILABLE": (503, "The idempotency key could not be recorded; nothing was executed."),
    "PAYOUT_OUTCOME_UNKNOWN": (500, "The payout may exist; look it up by reference before acting."),
    "DUPLICATE_REQUEST_DETECTED": (409, "An identical request was accepted under another key in the last 15 minutes."),
    # Sending and funding errors
    "DESTINATION_ACCOUNT_NOT_FOUND": (404, "No payable destination account with that id."),
    "RATE_DRIFT_EXCEEDED": (400, "The quote moved past expectDestination; re-quote."),
    "QUOTE_UNVERIFIABLE": (400, "The quote could not be compared; nothing was sent."),
    "QUOTE_NOT_POSITIVE": (400, "Nothing would arrive after fees."),
    "EXACT_OUTPUT_UNSUPPORTED": (400, "The routing cannot lock the receiving amount."),
    "INDICATIVE_PRICING_UNAVAILABLE": (400, "The routing prices only against a recipient."),
    "PAYOUT_NOT_CANCELABLE": (400, "Only a payout awaiting the organization's own funds can be canceled."),
    "PAYOUT_LIMIT_EXCEEDED": (422, "The payout is over a limit."),
    "PAYOUT_REFUSED": (422, "The payout is refused for this recipient."),
    "USE_POST_PAYOUTS": (403, "An approval threshold or velocity cap applies; send via POST /payouts."),
    "BENEFICIARY_EXTERNAL_ID_CONFLICT": (409, "externalId names a recipient with other account details."),
    "BANK_ACCOUNT_ALREADY_LINKED": (409, "This account is already on another recipient."),
    "PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE": (503, "The account could not be registered; nothing was saved."),
    "FUNDING_NOT_APPLICABLE": (501, "This payout settles from the balance; it needs no funding."),
    "FUNDING_TRANSACTION_INVALID": (400, "The transaction does not fund this payout; nothing was recorded."),
    "FUNDING_NOT_YET_VERIFIABLE": (409, "The transaction is not readable yet; confirm the same hash later."),
    "FUNDING_TRANSACTION_ALREADY_USED": (409, "This transaction funded another payout."),
    "PAYOUT_NOT_FUNDABLE": (400, "The payout is canceled or finished."),
    "FUNDING_QUOTE_EXPIRED": (409, "The funding quote expired."),
    "LINK_EXPIRED": (400, "The checkout draft's expiresAt has passed."),
    # Refund errors
    "REFUND_NOT_ALLOWED": (400, "This payment cannot be refunded."),
    "REFUND_DISPUTED": (400, "A dispute decides this payment."),
    "REFUND_EXCEEDS_REMAINING": (400, "The amount exceeds what remains refundable."),
    "REFUND_IN_PROGRESS": (409, "Another refund of this payment is in progress."),
    "REFUND_OUTCOME_UNKNOWN": (502, "The refund may have gone through; do not resend."),
    # Batch and payout link errors
    "BATCH_NOT_FOUND": (404, "No such batch in the organization."),
    "PAYOUT_BATCH_NOT_CONFIRMABLE": (409, "The batch is not awaiting confirmation."),
    "PAYOUT_BATCH_NOT_CANCELABLE": (409, "Creation of the batch has started."),
    "PAYOUT_BATCH_AWAITING_APPROVAL": (409, "The batch needs approvers."),
    "PAYOUT_BATCH_DUPLICATE_REFERENCE": (409, "externalReferenceId already names another run."),
    "MASS_PAYOUTS_DISABLED": (403, "The organization opted out of batches."),
    "PAYOUT_LINK_UNUSABLE": (400, "The payout link is expired, spent or failed."),
}


class ApiError(Exception):
    """A refusal rendered as the spec's error body; raised anywhere, rendered once by the app.

    `extra` carries the type-specific body fields (`originalIdempotencyKey`, `existingRecipientId`, ...).
    `status` defaults to the table; pass it only for a type the table does not know (mutants do).
    `keeps_writes`: the refusal is itself an outcome to record (a payout link that failed at execution stays
    failed), so the handler's transaction commits instead of rolling back.
    """

    keeps_writes = False

    def __init__(
        self,
        type: str,
        detail: str | None = None,
        *,
        status: int | None = None,
        errors: list[dict[str, str]] | None = None,
        resolution: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        known = ERRORS.get(type)
        if known is None and status is None:
            raise ValueError(f"unknown error type {type!r} needs an explicit status")
        self.type = type
        self.status = status if status is not None else known[0]  # type: ignore[index]
        self.detail = detail if detail is not None else (known[1] if known else type)
        self.errors = errors
        self.resolution = resolution
        self.headers = headers or {}
        self.extra = extra
        super().__init__(f"{self.type} ({self.status}): {self.detail}")


def validation_error(errors: list[dict[str, str]], detail: str | None = None) -> ApiError:
    """400 VALIDATION_ERROR naming every failed field, so a client can fix all of them at once."""
    names = ", ".join(e["field"] for e in errors)
    return ApiError("VALIDATION_ERROR", detail or f"Invalid fields: {names}.", errors=errors)


def field_error(field: str, reason: str) -> ApiError:
    """A VALIDATION_ERROR about one field (a query parameter, a header)."""
    return validation_error([{"field": field, "reason": reason}])


def error_body(err: ApiError, request_id: str) -> dict[str, Any]:
    """The spec's error body. Never a `retryable` field: the spec says there is none."""
    body: dict[str, Any] = {"type": err.type, "status": err.status, "detail": err.detail, "requestId": request_id}
    if err.resolution:
        body["resolution"] = err.resolution
    if err.errors:
        body["errors"] = err.errors
    body.update(err.extra)
    return body
