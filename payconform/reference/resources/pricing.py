"""Sandbox pricing: quotes (rate, fee, expiry on the organization's clock), corridor capabilities, and the
network's sandbox refusals.

The spec shows none of the pricing bodies; these are the profile's choices (`sandbox.pricing`):

- rate: the corridor's fixed sandbox rate (`corridors.RATES`); fee: a flat 0.50 in the source currency,
  taken from the amount sent, so 10.00 USD to a USD account delivers 9.50;
- a quote is valid for `lifetime` (5 minutes) on the organization's clock; sending it later is 400
  BAD_REQUEST ("expired quote");
- the quote id is a verifiable token: the priced terms and an HMAC of them under this server's secret, so a
  tampered, foreign or unknown quote is 400 QUOTE_UNVERIFIABLE and nothing is sent;
- `capabilities` per destination currency: EUR cannot lock the receiving amount (`exactOutput: false`,
  EXACT_OUTPUT_UNSUPPORTED), USDT prices only against a recipient (`indicativePricing: false`,
  INDICATIVE_PRICING_UNAVAILABLE);
- the network refuses before submission a source amount below the corridor minimum of 0.10
  (PROVIDER_REJECTED), a single payout above 50,000.00 (PAYOUT_LIMIT_EXCEEDED) and any payout whose scenario
  selector (`select_by`: the account identifier, or the amount in minor units) ends `0006` (PAYOUT_REFUSED);
- an organization whose features list `wallet_unprovisioned` (set by the operator) has no EVM wallet: a
  self-funded payout is 400 WALLET_NOT_PROVISIONED.

Every rule is an attribute of the instance (`ref.pricing`), so a mutant changes one server only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_UP, Decimal
from typing import Any

from ..core.clock import iso, parse_instant
from .corridors import FIELDS, RATES
from ..core.errors import ApiError
from ..core.ids import same_signature
from ..choices import SelectBy
from ..states.lifecycle import scenario_tail
from ..core.money import CENT, fmt
from ..core.orgs import get_org
from ..core.store import Store

REFUSED_SCENARIO = "0006"
DISCLAIMER = ("The recipient may receive less due to fees charged by the recipient's bank and foreign taxes.")

# the query of getIndicativeQuote (its route reads them; the deployment's document lists them)
QUERY_FIELDS = ("sourceCurrency", "destinationCurrency", "country", "sourceAmount", "destinationAmount")


@dataclass(frozen=True)
class Price:
    """Priced terms: what leaves the balance (`source_amount`, fee included) and what arrives."""

    source_amount: Decimal
    source_currency: str
    destination_amount: Decimal
    destination_currency: str
    fee: Decimal
    rate: Decimal

    def to_json(self) -> dict[str, Any]:
        return {
            "sourceAmount": fmt(self.source_amount), "sourceCurrency": self.source_currency,
            "destinationAmount": fmt(self.destination_amount), "destinationCurrency": self.destination_currency,
            "fee": {"currency": self.source_currency, "amount": fmt(self.fee)}, "rate": str(self.rate),
        }


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Pricing:
    def __init__(self, select_by: SelectBy, corridor_key: str) -> None:
        self.select_by: SelectBy = select_by  # what picks the refused-recipient scenario (the payout lifecycle's)
        self.corridor_key = corridor_key  # the field of a corridor row that names its destination currency
        self.secret = secrets.token_bytes(32)
        self.lifetime = timedelta(minutes=5)
        self.fee = Decimal("0.50")
        self.minimum = Decimal("0.10")
        self.single_limit = Decimal("50000.00")
        self.unprovisioned_feature = "wallet_unprovisioned"
        self.capabilities: dict[str, dict[str, bool]] = {
            "USD": {"exactOutput": True, "indicativePricing": True},
            "EUR": {"exactOutput": False, "indicativePricing": True},
            "USDC": {"exactOutput": True, "indicativePricing": True},
            "USDT": {"exactOutput": True, "indicativePricing": False},
        }

    # -- corridors --------------------------------------------------------------------------------

    def corridors(self) -> list[dict[str, Any]]:
        """The routing's corridors: destination currency, kind and capabilities."""
        return [{"kind": kind, self.corridor_key: currency, "sourceCurrencies": ["USD"],
                 "capabilities": dict(self.capabilities[currency])} for kind, currency in FIELDS]

    def capable(self, currency: str, capability: str) -> bool:
        return self.capabilities.get(currency, {}).get(capability, False)

    # -- prices -----------------------------------------------------------------------------------

    def price(self, source_currency: str, destination_currency: str, *, source_amount: Decimal | None = None,
              destination_amount: Decimal | None = None) -> Price:
        """Price a send of `source_amount` (fee taken from it), or the exact `destination_amount`."""
        rate = RATES[destination_currency]
        if destination_amount is not None:
            if not self.capable(destination_currency, "exactOutput"):
                raise ApiError("EXACT_OUTPUT_UNSUPPORTED",
                               f"The {destination_currency} routing cannot lock the receiving amount "
                               "(capabilities.exactOutput is false); price by sourceAmount.")
            source_amount = (destination_amount / rate).quantize(CENT, ROUND_UP) + self.fee
        assert source_amount is not None
        if source_amount < self.minimum:
            raise ApiError("PROVIDER_REJECTED", f"The network refused the payout: {fmt(source_amount)} "
                                                f"{source_currency} is below the corridor minimum.")
        arrives = (source_amount - self.fee) * rate
        if arrives.quantize(CENT) <= 0:
            raise ApiError("QUOTE_NOT_POSITIVE", f"After the {fmt(self.fee)} {source_currency} fee nothing "
                                                 "would arrive.")
        return Price(source_amount, source_currency, arrives.quantize(CENT), destination_currency, self.fee, rate)

    def check_network(self, amount: Decimal, currency: str, details_json: str) -> None:
        """The network's refusals before submission: corridor minimum, single limit, refused recipient."""
        if amount < self.minimum:
            raise ApiError("PROVIDER_REJECTED", f"The network refused the payout: {fmt(amount)} {currency} is "
                                                "below the corridor minimum.")
        if amount > self.single_limit:
            raise ApiError("PAYOUT_LIMIT_EXCEEDED", f"{fmt(amount)} {currency} is over the single payout limit "
                                                    f"of {fmt(self.single_limit)} {currency}.")
        if scenario_tail(self.select_by, details_json, amount) == REFUSED_SCENARIO:
            raise ApiError("PAYOUT_REFUSED", "The network refuses payouts to this recipient; this is final.")

    def has_wallet(self, store: Store, org_id: str) -> bool:
        """Whether the organization has the EVM wallet a self-funded payout is paid from (profile `sandbox.wallet`)."""
        org = get_org(store, org_id)
        return org is not None and self.unprovisioned_feature not in org.features

    # -- quotes -----------------------------------------------------------------------------------

    def issue(self, org_id: str, mode: str, destination_account_id: str, price: Price, now: datetime) -> dict[str, Any]:
        """A sendable quote: the priced terms, `expiresAt`, and `quoteId`, a token that proves them."""
        expires_at = iso(now + self.lifetime)
        terms = {"o": org_id, "m": mode, "d": destination_account_id, "e": expires_at,
                 "n": secrets.token_hex(6), **price.to_json()}
        payload = _b64(json.dumps(terms, separators=(",", ":"), sort_keys=True).encode())
        quote_id = f"qt_{payload}.{self.sign(payload)}"
        return {"quoteId": quote_id, "destinationAccountId": destination_account_id, **price.to_json(),
                "expiresAt": expires_at, "disclosure": disclosure("prepayment", price, estimated=False)}

    def sign(self, payload: str) -> str:
        return _b64(hmac.new(self.secret, payload.encode(), hashlib.sha256).digest())

    def verify(self, quote_id: Any, org_id: str, mode: str) -> dict[str, Any]:
        """The terms a quote id proves, or 400 QUOTE_UNVERIFIABLE (unknown, tampered or another org's)."""
        unverifiable = ApiError("QUOTE_UNVERIFIABLE", "The quote could not be verified against its price; "
                                                      "nothing was sent. Price the payout again.")
        if not isinstance(quote_id, str) or not quote_id.startswith("qt_") or "." not in quote_id:
            raise unverifiable
        payload, signature = quote_id[3:].split(".", 1)
        if not payload.isascii() or not same_signature(signature, self.sign(payload)):
            raise unverifiable
        try:
            terms = json.loads(_unb64(payload))
        except ValueError:
            raise unverifiable from None
        if terms.get("o") != org_id or terms.get("m") != mode:
            raise unverifiable
        return terms

    def expired(self, terms: dict[str, Any], now: datetime) -> bool:
        expires_at = parse_instant(terms["e"])
        return expires_at is None or now >= expires_at


def terms_price(terms: dict[str, Any]) -> Price:
    """The Price a verified quote carries."""
    return Price(Decimal(terms["sourceAmount"]), terms["sourceCurrency"], Decimal(terms["destinationAmount"]),
                 terms["destinationCurrency"], Decimal(terms["fee"]["amount"]), Decimal(terms["rate"]))


def disclosure(kind: str, price: Price, *, estimated: bool) -> dict[str, Any]:
    """A `RegEDisclosure`: `kind` prepayment (a quote) or receipt (a send), `estimated`, signed `lines`."""
    return {
        "kind": kind,
        "estimated": estimated,
        "lines": [
            {"label": "Transfer amount", "amount": fmt(price.source_amount), "currency": price.source_currency,
             "sign": "+"},
            {"label": "Transfer fee", "amount": fmt(price.fee), "currency": price.source_currency, "sign": "-"},
            {"label": "Total to recipient", "amount": fmt(price.destination_amount),
             "currency": price.destination_currency, "sign": "+"},
        ],
        "otherFeesDisclaimer": DISCLAIMER,
    }
