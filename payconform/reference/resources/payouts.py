"""Payouts (foundation): the one way a payout is made, found and canceled.

Money moves from the organization's USD balance to a recipient's payment method named by its
`destinationAccountId`. Sandbox pricing: a fixed rate per destination currency and no fee (a quote sent with
sendPayout carries its fee, `quotes.py`); the network's sandbox refusals and the wallet check are
`ref.pricing`'s. The payout is created `pending`; every read first settles it on the organization's clock
(`lifecycle.py`), so a read shows where the payout stands now and never an older state. `place` is shared by
every way a payout is made (POST /payouts, an approved request, a batch line, a quote, a payout link).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from decimal import Decimal
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from starlette.datastructures import Headers, QueryParams

from ..core import ids
from . import ledger
from .approvals import Approvals, kept_request
from ..authentication.auth import Principal
from ..core.clock import Clock, iso
from .corridors import RATES
from ..core.errors import ApiError, field_error
from ..states.lifecycle import Lifecycle, LifecycleServer
from ..core.money import fmt
from ..core.operation import Call, Operation, Reply
from .payout_view import awaiting_funds, payout_json
from ..core.validate import check

if TYPE_CHECKING:
    from .pricing import Pricing

PAYMENT_REASONS = frozenset({
    "charitable_contributions", "education_fees", "employee_salaries_or_wages", "gifts", "investments",
    "purchase_of_goods", "purchase_of_services", "personal_transfers", "rent", "loans", "utility_bills",
    "family_support", "friends_support", "real_estate", "insurance", "intercompany_transfer", "taxes", "travel",
})
DESTINATION_CURRENCY = re.compile(r"^[A-Z]{3,4}$")  # ISO 4217, or a stablecoin (USDC, USDT)
SOURCE_CURRENCIES = ("USD",)  # the sandbox balance is one provider-held USD figure
ORDERS_NETWORK = "ordersNetwork"  # operator fault pseudo-operation: the network read of a lookup by reference


class PayoutServer(LifecycleServer, Protocol):
    """What placing a payout reaches: the approval policy, the network's rules and the payout lifecycle."""

    approvals: Approvals
    pricing: Pricing
    lifecycle: Lifecycle


class ApprovedServer(PayoutServer, Protocol):
    """What executing an approved request reaches besides: the clock and the createPayout operation."""

    clock: Clock
    operations: Mapping[str, Operation]


@dataclass(frozen=True)
class PayoutOrder:
    """What a payout request asks for, validated (the fields of the profile's `createPayout` body)."""

    destination_account_id: str
    amount: Decimal
    source_currency: str
    destination_currency: str
    reference: str
    payment_reason: str | None = None
    fee: Decimal = Decimal(0)  # a priced quote's fee (sendPayout); taken from the amount sent


def read_order(body: Any) -> PayoutOrder:
    """The `createPayout` body as an order; every failed field in one 400 VALIDATION_ERROR (also a batch line's
    first check, so it lives with the payout rules rather than the route)."""
    c = check(body)
    account_id = c.string("destinationAccountId", required=True, max_len=100)
    amount = c.amount("sourceAmount", required=True)
    source_currency = c.string("sourceCurrency", required=True, choices=SOURCE_CURRENCIES)
    destination_currency = c.string("destinationCurrency", required=True, pattern=DESTINATION_CURRENCY, max_len=4)
    reference = c.string("reference", required=True)
    reason = c.string("paymentReason", nullable=True, choices=PAYMENT_REASONS)
    c.done()
    assert account_id and amount is not None and source_currency and destination_currency and reference
    return PayoutOrder(account_id, amount, source_currency, destination_currency, reference, reason)


def make_payout(call: Call[PayoutServer], *, approved: bool = False) -> Reply:
    """Create the payout `call`'s body asks for; an approved (held) request skips the approval policy."""
    return place(call, read_order(call.json()), approved=approved)


def _destination(call: Call[PayoutServer], account_id: str) -> sqlite3.Row:
    """The active method behind a destinationAccountId; deleted methods and recipients are not payable."""
    row = call.ref.store.one(
        "SELECT m.* FROM payment_methods m JOIN recipients r ON r.id = m.recipient_id"
        " WHERE m.destination_account_id = ? AND m.org_id = ? AND m.mode = ?"
        " AND m.deleted_at IS NULL AND r.deleted_at IS NULL",
        (account_id, call.org_id, call.mode),
    )
    if row is None:
        raise ApiError("DESTINATION_ACCOUNT_NOT_FOUND")
    return row


def vet(call: Call[PayoutServer], order: PayoutOrder) -> sqlite3.Row:
    """The checks before anything is priced (also a batch line's validation): a positive amount to a payable
    destination in its currency. The destination's payment method."""
    if order.amount <= 0:
        raise ApiError("BAD_REQUEST", "sourceAmount must be positive.")
    method = _destination(call, order.destination_account_id)
    if order.destination_currency != method["currency"]:
        raise field_error("destinationCurrency", f"the destination account takes {method['currency']}")
    return method


def place(call: Call[PayoutServer], order: PayoutOrder, *, approved: bool = False) -> Reply:
    """Every rule of sending after validation, then the payout: 201 with it, or 202 held for approvers.

    Each refusal is raised before anything is written.
    """
    amount, source_currency, account_id = order.amount, order.source_currency, order.destination_account_id
    method = vet(call, order)
    destination_currency = order.destination_currency
    # Profile (sandbox.self_funded): a crypto payout is funded from the organization's own wallet.
    self_funded = method["kind"] == "crypto"
    if self_funded and "crypto_payouts" not in call.principal.scopes:
        raise ApiError("CRYPTO_PAYOUTS_DISABLED")
    if self_funded and not call.ref.pricing.has_wallet(call.ref.store, call.org_id):
        raise ApiError("WALLET_NOT_PROVISIONED")
    if not approved and call.ref.approvals.applies(call, amount):
        return call.ref.approvals.hold(call, amount=amount, currency=source_currency,
                                       destination_account_id=account_id)
    call.ref.pricing.check_network(amount, source_currency, method["details"])
    if not self_funded and ledger.balance(call.ref.store, call.org_id, call.mode, source_currency) < amount:
        raise ApiError("INSUFFICIENT_BALANCE")
    rate = RATES[destination_currency]
    payout_id, scenario = ids.new_id("po"), call.ref.lifecycle.scenario(method["details"], amount)
    call.ref.store.run(
        "INSERT INTO payouts (id, org_id, mode, reference, recipient_id, destination_account_id, source_amount,"
        " source_currency, destination_amount, destination_currency, fee_amount, fee_currency, rate,"
        " payment_reason, status, created_at, scenario, requires_funding)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,'pending',?,?,?)",
        (payout_id, call.org_id, call.mode, order.reference, method["recipient_id"], account_id, fmt(amount),
         source_currency, fmt((amount - order.fee) * rate), destination_currency, fmt(order.fee), source_currency,
         str(rate), order.payment_reason, iso(call.now), scenario, int(self_funded)),
    )
    call.ref.lifecycle.record(call, payout_id, "payout.pending", None, "pending", call.now)
    if not self_funded:
        ledger.post(call, type="payout", amount=-amount, currency=source_currency, order_id=payout_id)
    return Reply(201, payout_json(find(call, payout_id)), payout_id)


def find(call: Call[PayoutServer], payout_id: str) -> sqlite3.Row:
    """The payout of this organization and mode, settled on its clock; 404 otherwise."""
    row = call.ref.store.one(
        "SELECT * FROM payouts WHERE id = ? AND org_id = ? AND mode = ?", (payout_id, call.org_id, call.mode)
    )
    if row is None:
        raise ApiError("NOT_FOUND", "No such payout in this organization.")
    return call.ref.lifecycle.settle(call, row)


def cancel(call: Call[PayoutServer], payout_id: str) -> sqlite3.Row:
    """Only a payout awaiting the organization's own funds can be canceled; money had not moved. The payout."""
    row = find(call, payout_id)
    if not awaiting_funds(row):
        raise ApiError("PAYOUT_NOT_CANCELABLE")
    call.ref.store.run("UPDATE payouts SET status = 'canceled', funds_returned = 0 WHERE id = ?", (row["id"],))
    call.ref.lifecycle.record(call, row["id"], "payout.canceled", "pending", "canceled", call.now)
    return find(call, row["id"])


def execute_approved(ref: ApprovedServer, org_id: str, row: sqlite3.Row, request_id: str, path: str) -> None:
    """Run a held request now, as the key that sent it; record `executed` or `execution_failed`."""
    raw, scopes = kept_request(row)
    now = ref.clock.now(org_id)
    call = Call(ref=ref, op=ref.operations["createPayout"], request_id=request_id,
                principal=Principal(key_id="approval", org_id=org_id, mode=row["mode"], prefix="", scopes=scopes),
                org_id=org_id, path=path, params={"orgId": org_id}, query_params=QueryParams(""),
                headers=Headers(), raw_body=raw, now=now)
    try:
        reply = make_payout(call, approved=True)
    except ApiError as err:
        ref.approvals.decide(ref.store, row, "execution_failed", now, error_type=err.type,
                             approvals=row["approvals"] + 1)
        return
    ref.approvals.decide(ref.store, row, "executed", now, payout_id=reply.body["payoutId"],
                         approvals=row["approvals"] + 1)
