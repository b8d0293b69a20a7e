"""Corridors: which account fields a payment method needs, how to validate them, and pricing.

fiat USD {accountNumber: 4-17 digits, routingNumber: 9 digits}; fiat EUR {iban};
crypto USDC/USDT {address: 0x + 40 hex, chain: ethereum|polygon|base|solana}.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from ..core.validate import Checker

CHAINS = ("ethereum", "polygon", "base", "solana")
_EVM_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
FIELDS: dict[tuple[str, str], dict[str, re.Pattern[str] | tuple[str, ...]]] = {
    ("fiat", "USD"): {"accountNumber": re.compile(r"^[0-9]{4,17}$"), "routingNumber": re.compile(r"^[0-9]{9}$")},
    ("fiat", "EUR"): {"iban": re.compile(r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$")},
    ("crypto", "USDC"): {"address": _EVM_ADDRESS, "chain": CHAINS},
    ("crypto", "USDT"): {"address": _EVM_ADDRESS, "chain": CHAINS},
}
CURRENCIES = {kind: tuple(c for k, c in FIELDS if k == kind) for kind in ("fiat", "crypto")}
# Sandbox pricing from the USD balance: a fixed rate and no fee.
RATES = {"USD": Decimal("1"), "EUR": Decimal("0.92"), "USDC": Decimal("1"), "USDT": Decimal("1")}


def read_method(c: Checker) -> tuple[str, str, dict[str, str]] | None:
    """`{kind, currency, recipientDetails}` -> (kind, currency, normalized details), failures on `c`."""
    kind = c.string("kind", required=True, choices=("fiat", "crypto"))
    currency = c.string("currency", required=True, max_len=10)
    details = c.nested("recipientDetails", required=True)
    if kind is None or currency is None:
        return None
    if currency not in CURRENCIES[kind]:
        c.fail("currency", f"{kind} methods take one of " + ", ".join(CURRENCIES[kind]))
        return None
    if details is None:
        return None
    values = read_details(details, kind, currency)
    return None if values is None else (kind, currency, values)


def read_details(details: Checker, kind: str, currency: str) -> dict[str, str] | None:
    """The corridor's account fields out of `details` (normalized), failures on the checker; None if any failed."""
    if "iban" in details.obj and isinstance(details.obj["iban"], str):
        details.obj = {**details.obj, "iban": details.obj["iban"].replace(" ", "").upper()}
    values: dict[str, str] = {}
    for name, rule in FIELDS[(kind, currency)].items():
        if isinstance(rule, tuple):
            value = details.string(name, required=True, choices=rule)
        else:
            value = details.string(name, required=True, max_len=64, pattern=rule)
        if value is not None:
            values[name] = value
    if len(values) != len(FIELDS[(kind, currency)]):
        return None
    return values


def kind_of(currency: str) -> str:
    """`fiat` or `crypto`: the kind of method that takes `currency`."""
    return next(kind for kind, currencies in CURRENCIES.items() if currency in currencies)


def account_fingerprint(kind: str, currency: str, details: dict[str, Any]) -> str:
    """What makes two methods the same account (used for BANK_ACCOUNT_ALREADY_LINKED)."""
    if kind == "crypto":
        return f"crypto:{details['chain']}:{details['address'].lower()}"
    return f"fiat:{currency}:" + ":".join(details[name] for name in sorted(FIELDS[(kind, currency)]))
