"""Money as decimal strings (never floats), the way the spec puts amounts on the wire."""

from __future__ import annotations

import re
from decimal import Decimal

_DECIMAL = re.compile(r"^-?[0-9]{1,15}(\.[0-9]{1,8})?$")
CENT = Decimal("0.01")


def parse_decimal(value: object) -> Decimal | None:
    """A decimal string such as "150.00" or "-3"; None for anything else (numbers, exponents, blanks)."""
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
        return None
    return Decimal(value)


def decimals(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def fmt(value: Decimal) -> str:
    """Two decimal places, the form every amount takes in responses."""
    return str(value.quantize(CENT))


def fmt_exact(value: Decimal) -> str:
    """Two decimal places, or the value's own where it has more: a sum of token figures (six places) stays the
    exact sum of its sources."""
    return fmt(value) if decimals(value) <= 2 else str(value)
