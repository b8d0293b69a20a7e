"""What a deployment of the spec chose where the spec does not show: one frozen table per configuration.

The spec names operations whose paths, request bodies or list envelopes it does not show, and leaves the
sandbox's payout scenario selection, approval threshold, corridor row fields and dwell times open. `DEFAULT`
is what the reference chose (the route modules' own paths and `{data, nextCursor}` pages); `OTHER` chose
differently at every one of those places, so that the suite can be shown to read a deployment's choices
rather than assume its own. A Reference is built with one Choices and hands it to the parts that need it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Literal

SelectBy = Literal["account_suffix", "amount_minor_suffix"]

# The places the spec does not show, per operation id: its path ("path"), its request body ("body") or the
# envelope of its list answer ("envelope"). The served OpenAPI document describes exactly these operations.
NOT_SHOWN: Mapping[str, frozenset[str]] = MappingProxyType({
    op_id: frozenset(parts.split()) for op_id, parts in {
        "pricePayout": "path body", "sendPayout": "path body", "getIndicativeQuote": "path",
        "listCorridors": "path envelope", "getFundingAccounts": "path envelope", "getPayoutFunding": "path",
        "fundSandbox": "path body", "listPayouts": "path envelope", "getPayout": "path",
        "createBeneficiary": "path body", "listBeneficiaries": "path envelope", "createPayoutLink": "path body",
        "createCheckoutLink": "path body", "getCheckoutLink": "path", "listCheckoutLinks": "path envelope",
        "updateCheckoutLink": "path body", "getCheckoutProduct": "path", "listCheckoutProducts": "path envelope",
        "createPayout": "body", "createPayoutBatch": "body", "createSandboxWebhookEndpoint": "body",
        "refundCheckoutPayment": "body",
        "listBalanceTransactions": "envelope", "listAuditEvents": "envelope", "listPayoutBatches": "envelope",
        "listPayoutBatchItems": "envelope", "listPayoutApprovals": "envelope", "listPaymentReasons": "envelope",
        "listOrders": "envelope", "listEvents": "envelope", "listWebhookEndpoints": "envelope",
        "listCheckoutPayments": "envelope",
    }.items()
})


@dataclass(frozen=True)
class Route:
    """Where an operation is served, relative to the API prefix."""

    method: str
    path: str


@dataclass(frozen=True)
class Envelope:
    """The keys of a list answer: its array and the cursor of the next page (None: the list is not paged)."""

    items: str = "data"
    cursor: str | None = "nextCursor"


@dataclass(frozen=True)
class Timeline:
    """Seconds after a sandbox payout starts to move: `processing`, its final state, a bank return (0004)."""

    processing: float
    final: float
    returned: float


@dataclass(frozen=True)
class Choices:
    """One deployment's choices. `routes` lists only the operations served elsewhere than their route
    module's path; `envelopes` only the lists whose keys are not `{data, nextCursor}`."""

    name: str
    select_by: SelectBy
    approval_threshold: Decimal
    corridor_key: str
    timeline: Timeline
    recipient_method_field: str
    routes: Mapping[str, Route] = field(default_factory=dict)
    envelopes: Mapping[str, Envelope] = field(default_factory=dict)

    def envelope(self, op_id: str) -> Envelope:
        return self.envelopes.get(op_id, Envelope())


# Lists answered whole: their envelope has no cursor.
_UNPAGED = ("listCorridors", "getFundingAccounts", "listPaymentReasons", "listEvents", "listWebhookEndpoints")

DEFAULT = Choices(
    name="default",
    select_by="account_suffix",
    approval_threshold=Decimal("5000.00"),
    corridor_key="currency",
    timeline=Timeline(processing=10, final=30, returned=90),
    recipient_method_field="paymentMethod",
    envelopes=MappingProxyType({op_id: Envelope("data", None) for op_id in _UNPAGED}),
)

_P = "/payments/organizations/{orgId}"
_C = "/checkout/organizations/{orgId}"
_ITEMS = Envelope("items")  # the cursor stays `nextCursor`: the Conventions row shows it for every cursor-paged list

OTHER = Choices(
    name="other",
    select_by="amount_minor_suffix",
    approval_threshold=Decimal("25000.00"),
    corridor_key="destinationCurrency",
    timeline=Timeline(processing=2, final=5, returned=15),
    recipient_method_field="payoutMethod",
    routes=MappingProxyType({
        "pricePayout": Route("POST", _P + "/payouts/quote"),
        "sendPayout": Route("POST", _P + "/payouts/from-quote"),
        "getIndicativeQuote": Route("GET", _P + "/quotes/indicative"),
        "listCorridors": Route("GET", _P + "/routing/corridors"),
        "getFundingAccounts": Route("GET", _P + "/funding/accounts"),
        "getPayoutFunding": Route("GET", _P + "/payouts/{payoutId}/funding-instructions"),
        "fundSandbox": Route("POST", _P + "/sandbox/top-ups"),
        "listPayouts": Route("GET", _P + "/payouts/search"),
        "getPayout": Route("GET", _P + "/payout/{payoutId}"),
        "createBeneficiary": Route("POST", "/recipients/{orgId}/new"),
        "listBeneficiaries": Route("GET", "/recipients/{orgId}/list"),
        "createPayoutLink": Route("POST", _P + "/hosted-payout-links"),
        "createCheckoutLink": Route("POST", _C + "/payment-links"),
        "getCheckoutLink": Route("GET", _C + "/payment-links/{linkId}"),
        "listCheckoutLinks": Route("GET", _C + "/payment-links"),
        "updateCheckoutLink": Route("POST", _C + "/payment-links/{linkId}"),
        "getCheckoutProduct": Route("GET", _C + "/product-catalog/{productId}"),
        "listCheckoutProducts": Route("GET", _C + "/product-catalog"),
    }),
    envelopes=MappingProxyType({
        **{op_id: _ITEMS for op_id in (
            "listPayouts", "listBeneficiaries", "listCheckoutLinks", "listCheckoutProducts",
            "listBalanceTransactions", "listAuditEvents", "listPayoutBatches", "listPayoutBatchItems",
            "listPayoutApprovals", "listOrders")},
        **{op_id: Envelope("items", None) for op_id in _UNPAGED},
        "listCheckoutPayments": _ITEMS,
    }),
)

CONFIGURATIONS: Mapping[str, Choices] = MappingProxyType({c.name: c for c in (DEFAULT, OTHER)})
