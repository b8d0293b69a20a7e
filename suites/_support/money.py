"""Money as the spec writes it: decimal strings beside a currency (never JSON numbers), and the checkout
payment reads in base units with `decimals`. Amounts are compared as `Decimal`, never floats."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from payconform.suite import DECIMAL, expect, is_decimal_string

from .answers import leaves

__all__ = ["DECIMAL", "as_decimal", "base_amount", "decimal_values", "is_decimal_string", "is_json_number"]


def decimal_values(value: Any) -> set[Decimal]:
    """The amounts of every decimal string inside a JSON value, by value: the spec fixes no scale, so "150",
    "150.0" and "150.00" are the same amount."""
    return {Decimal(v) for _, v in leaves(value) if is_decimal_string(v)}


def is_json_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def as_decimal(value: Any) -> Decimal | None:
    """A string amount as a Decimal; None for anything else (absent, a JSON number, not a number)."""
    try:
        return Decimal(value) if isinstance(value, str) else None
    except InvalidOperation:
        return None


def base_amount(payment_or_refund: dict[str, Any], field: str, decimals: Any = None) -> Decimal:
    """A base-unit string field as an amount: `15000` with `decimals: 2` is Decimal("150.00")."""
    raw, places = payment_or_refund.get(field), payment_or_refund.get("decimals", decimals)
    expect(isinstance(raw, str) and raw.isdigit(), f"`{field}` is {raw!r}, not a base-unit string of digits")
    expect(isinstance(places, int) and not isinstance(places, bool), f"`decimals` is {places!r}, not an integer")
    return Decimal(raw).scaleb(-places)
