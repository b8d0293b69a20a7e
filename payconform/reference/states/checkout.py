"""Checkout rules of one reference server: the sandbox scenarios, the public page and the card processor.

Kept on the Reference as `ref.checkout` so that a mutant can change one rule on one server instance (the
`.02` settlement delay, the chargeback delay, what the public page answers, ...). The card processor is
simulated: the operator breaks it with faults of the pseudo-operation `checkoutCardProcessor` (`timeout`: it
does not answer, 500 INTERNAL; `unavailable`: card payments are not set up, 503 INTERNAL; an `error` with
status 500 or 503 stands for either), which the publish step consumes after the expiry check, so
`LINK_EXPIRED` comes before any processor call.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import ApiError
from ..core.faults import Faults
from ..core.operation import API_PREFIX, Operation, StoreServer

if TYPE_CHECKING:
    from ..conventions.idempotency import Idempotency
    from ..core.operation import Call

CARD_PROCESSOR = "checkoutCardProcessor"
PSEUDO_OPERATIONS = (CARD_PROCESSOR,)
PUBLISH, EDIT = "publishCheckoutLink", "updateCheckoutLink"

SETTLES = "settles"        # `.02`: pending, then paid
CHARGEBACK = "chargeback"  # `.04`: paid, then charged back
ORDINARY = "paid"


class CheckoutServer(StoreServer, Protocol):
    """What the in-flight checks reach: the rows, the idempotency fingerprints, the injected processor faults
    and the operations where the deployment serves them."""

    faults: Faults
    idempotency: Idempotency
    operations: Mapping[str, Operation]


class CheckoutRules:
    """Amount-driven sandbox outcomes (Limits: `.02` settles over 20 s, `.04` charged back after a minute)."""

    def __init__(self) -> None:
        self.settle_seconds = 10.0
        self.chargeback_seconds = 60.0
        self.zero_price_products = False  # a product priced 0 is refused (BAD_REQUEST: non-positive amount)
        self.max_simulated_payments = 101  # the least that shows `limit` above 100 becoming 100 on one link
        self.attempt_clears_seconds = 30.0
        self.decimals = 2
        self.forced = {  # action -> (statuses it may leave, status it reaches, event)
            "fail": (("pending",), "failed", "checkout_payment.failed"),
            "chargeback": (("paid",), "reversed", "checkout_payment.reversed"),
            "refund": (("paid",), "refunded", "checkout_payment.refunded"),
        }
        self.attempts: dict[str, datetime] = {}   # link id -> until when a timed-out publish blocks retries
        self.card_pages: dict[str, str] = {}      # link id -> total its (possibly orphaned) card page was set up at

    def scenario(self, amount_base: int) -> str:
        """The last two digits of the total in minor units pick the outcome."""
        return {2: SETTLES, 4: CHARGEBACK}.get(amount_base % 100, ORDINARY)

    def initial_status(self, scenario: str) -> str:
        return "pending" if scenario == SETTLES else "paid"

    def expiry_due(self, expires_at: str, now: str) -> bool:
        """Whether a `sent` link with this `expiresAt` reads `expired` at `now` (both `iso` instants, which sort
        in time order): here as soon as it has passed; what moves a link to `expired` is not shown."""
        return expires_at <= now

    def page_status(self, link_status: str) -> int:
        """The public page: served while `sent`, gone once cancelled or expired, absent for a draft."""
        if link_status == "sent":
            return 200
        return 410 if link_status in ("cancelled", "expired") else 404

    def table(self) -> dict[str, Any]:
        """GET /sandbox/scenarios."""
        return {
            "selector": "last two digits of the link total in minor units",
            "data": [
                {"suffix": "02", "example": "150.02", "initialStatus": "pending",
                 "then": {"status": "paid", "withinSeconds": 20}},
                {"suffix": "04", "example": "150.04", "initialStatus": "paid",
                 "then": {"status": "reversed", "event": "checkout_payment.reversed", "afterSeconds": 60}},
                {"suffix": "other", "example": "150.00", "initialStatus": "paid"},
            ],
        }

    def call_processor(self, call: Call[CheckoutServer], link_id: str, total: str) -> None:
        """Set up the hosted card page; an injected processor fault refuses (503) or times out (500)."""
        faults, org_id = call.ref.faults, call.org_id
        not_set_up = "Card payments are not set up for this organization."
        if faults.take(org_id, CARD_PROCESSOR, "unavailable") is not None:
            raise ApiError("INTERNAL", not_set_up, status=503)
        fault = faults.take(org_id, CARD_PROCESSOR, "error")
        if fault is not None and (fault.status or 500) != 500:
            raise ApiError(fault.type or "INTERNAL", not_set_up, status=fault.status)
        if fault is None and faults.take(org_id, CARD_PROCESSOR, "timeout") is None:
            return
        # no answer: the card page may exist, retries conflict until the attempt clears
        self.attempts[link_id] = call.now + timedelta(seconds=self.attempt_clears_seconds)
        self.card_pages[link_id] = total
        raise ApiError("INTERNAL", "The card processor did not answer; the card page may exist.", status=500)

    def publish_in_flight(self, call: Call[CheckoutServer], link_id: str) -> bool:
        """Another publish of this link or an edit of a link is still running."""
        own = call.headers.get("idempotency-key") or ""
        same_link = self._publish_fingerprint(call, link_id)
        rows = call.ref.store.all(
            "SELECT op_id, fingerprint FROM idempotency WHERE org_id = ? AND mode = ? AND state = 'running'"
            " AND key != ? AND op_id IN (?, ?)",
            (call.org_id, call.mode, own, PUBLISH, EDIT),
        )
        return any(r["op_id"] == EDIT or r["fingerprint"] == same_link for r in rows)

    def publish_running(self, call: Call[CheckoutServer], link_id: str) -> bool:
        """A publish of this link is still running: an edit must wait."""
        return call.ref.store.one(
            "SELECT 1 FROM idempotency WHERE org_id = ? AND mode = ? AND state = 'running'"
            " AND op_id = ? AND fingerprint = ?",
            (call.org_id, call.mode, PUBLISH, self._publish_fingerprint(call, link_id)),
        ) is not None

    @staticmethod
    def _publish_fingerprint(call: Call[CheckoutServer], link_id: str) -> str:
        """The idempotency fingerprint of a publish of `link_id`: the publish operation at the method and path
        this deployment serves it, with no body."""
        publish = call.ref.operations[PUBLISH]
        path = API_PREFIX + publish.path.format(**{**call.params, "linkId": link_id})
        return call.ref.idempotency.fingerprint(publish.method, path, "")

    def refund_in_flight(self, call: Call[CheckoutServer]) -> bool:
        """One refund at a time: another refund call of the organization is still running."""
        own = call.headers.get("idempotency-key") or ""
        return call.ref.store.one(
            "SELECT 1 FROM idempotency WHERE org_id = ? AND mode = ? AND op_id = ? AND state = 'running' AND key != ?",
            (call.org_id, call.mode, call.op.op_id, own),
        ) is not None

    def publish_blocked(self, link_id: str, total: str, now: datetime) -> str | None:
        """Why a publish must answer 409 now (an attempt still clearing, or a reprice since the card page)."""
        until = self.attempts.get(link_id)
        if until is not None and now < until:
            return "A previous publish attempt of this link has not cleared yet; retry later."
        page_total = self.card_pages.get(link_id)
        if page_total is not None and page_total != total:
            return "The draft was repriced after its card page was set up; delete it and create a new link."
        return None
