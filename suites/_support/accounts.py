"""Payment accounts of the profile's corridors, made unique so that no two tests share one.

Every fresh account identifier ends in `0000`: the profile's sandbox payout scenarios read the last four
characters of the account, and `0000` selects the ordinary path.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from payconform.suite import Contract, leading_digits

from .profile import corridors

NO_SCENARIO = "0000"


def _account_number(example: str) -> str:
    """Unique in the leading digits."""
    return leading_digits() + NO_SCENARIO


def _iban(example: str) -> str:
    """An IBAN of the example's country with valid ISO 13616 check digits and a random 18-digit BBAN."""
    country = example[:2]
    bban = "".join(secrets.choice("0123456789") for _ in range(14)) + NO_SCENARIO
    letters = "".join(str(ord(c) - ord("A") + 10) for c in country)
    check = 98 - int(bban + letters + "00") % 97  # the country and "00" moved to the end, letters as numbers
    return f"{country}{check:02d}{bban}"


def _evm_address(example: str) -> str:
    return "0x" + secrets.token_hex(18) + NO_SCENARIO


# Account identifier fields of the profile's corridors, and how to make a fresh one from the example's.
UNIQUE_FIELDS: dict[str, Callable[[str], str]] = {
    "accountNumber": _account_number,
    "iban": _iban,
    "address": _evm_address,
}


def account_details(contract: Contract, corridor: str) -> dict[str, str]:
    """The corridor's example account fields with a fresh account identifier."""
    details = dict(corridors(contract)[corridor]["example"])
    for name, make in UNIQUE_FIELDS.items():
        if name in details:
            details[name] = make(details[name])
    return details


def method_body(contract: Contract, corridor: str, details: dict[str, str] | None = None) -> dict[str, Any]:
    """An add-payment-method body (Endpoints > Recipients: `kind`, `currency`, `recipientDetails`)."""
    row = corridors(contract)[corridor]
    return {"kind": row["kind"], "currency": row["currency"],
            "recipientDetails": details if details is not None else account_details(contract, corridor)}


def with_account_tail(details: dict[str, str], tail: str) -> dict[str, str]:
    """`details` whose account identifier ends in `tail` (how the profile selects a sandbox outcome)."""
    field = next(f for f in UNIQUE_FIELDS if f in details)
    return {**details, field: details[field][: -len(tail)] + tail}


def account_identifiers(obj: Any) -> set[str]:
    """The account identifiers (`accountNumber`, `iban`, `address`) anywhere inside a JSON value."""
    found: set[str] = set()
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in UNIQUE_FIELDS and isinstance(value, str):
                found.add(value)
            else:
                found |= account_identifiers(value)
    elif isinstance(obj, list):
        for value in obj:
            found |= account_identifiers(value)
    return found
