"""Strict field validation that collects every failure into one 400 VALIDATION_ERROR.

Wrong types and bad values must never reach a handler as a crash (a 500): the Checker turns each of
them into an `errors` entry `{field, reason}` naming the field with its path (`paymentMethod.currency`).
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from typing import Any

from .clock import parse_instant
from .errors import validation_error
from .money import decimals, parse_decimal

COUNTRIES = frozenset(
    """AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT
    BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER
    ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID
    IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV
    LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR
    NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL
    SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC
    VE VG VI VN VU WF WS YE YT ZA ZM ZW""".split()
)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
CURRENCY = re.compile(r"^[A-Z]{3}$")
_MISSING = object()


def require_object(body: Any, field: str = "body") -> dict[str, Any]:
    """The request body (or a nested value) must be a JSON object."""
    if not isinstance(body, dict):
        raise validation_error([{"field": field, "reason": "must be a JSON object"}])
    return body


class Checker:
    """Reads typed fields out of a JSON object, remembering every failure; `done()` raises them together."""

    def __init__(self, obj: dict[str, Any], prefix: str = "") -> None:
        self.obj = obj
        self.prefix = prefix
        self.errors: list[dict[str, str]] = []

    def name(self, field: str) -> str:
        return f"{self.prefix}{field}"

    def fail(self, field: str, reason: str) -> None:
        self.errors.append({"field": self.name(field), "reason": reason})

    def nested(self, field: str, required: bool = False) -> Checker | None:
        """A child object; its failures are reported on this checker under `field.`."""
        value = self.obj.get(field, _MISSING)
        if value is _MISSING or value is None:
            if required:
                self.fail(field, "required")
            return None
        if not isinstance(value, dict):
            self.fail(field, "must be an object")
            return None
        child = Checker(value, self.name(field) + ".")
        child.errors = self.errors
        return child

    def _get(self, field: str, required: bool, nullable: bool) -> Any:
        value = self.obj.get(field, _MISSING)
        if value is _MISSING or (value is None and not nullable):
            if required:
                self.fail(field, "required")
            return _MISSING
        return value

    def string(
        self,
        field: str,
        *,
        required: bool = False,
        nullable: bool = False,
        max_len: int = 200,
        min_len: int = 1,
        pattern: re.Pattern[str] | None = None,
        choices: frozenset[str] | tuple[str, ...] | None = None,
    ) -> str | None:
        value = self._get(field, required, nullable)
        if value is _MISSING or value is None:
            return None
        if not isinstance(value, str):
            self.fail(field, "must be a string")
        elif not min_len <= len(value) <= max_len:
            self.fail(field, f"must be {min_len}-{max_len} characters")
        elif choices is not None and value not in choices:
            self.fail(field, "must be one of " + ", ".join(sorted(choices)) if len(choices) <= 20 else "is not allowed")
        elif pattern is not None and not pattern.fullmatch(value):
            self.fail(field, "has an invalid format")
        else:
            return value
        return None

    def boolean(self, field: str, *, required: bool = False) -> bool | None:
        value = self._get(field, required, False)
        if value is _MISSING:
            return None
        if not isinstance(value, bool):
            self.fail(field, "must be a boolean")
            return None
        return value

    def integer(self, field: str, *, low: int, high: int, required: bool = False) -> int | None:
        value = self._get(field, required, False)
        if value is _MISSING:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.fail(field, f"must be an integer between {low} and {high}")
            return None
        return value

    def amount(self, field: str, *, required: bool = False, places: int = 2) -> Decimal | None:
        """A decimal string. Its sign is the handler's business (non-positive is BAD_REQUEST, not a field error)."""
        value = self._get(field, required, False)
        if value is _MISSING:
            return None
        amount = parse_decimal(value)
        if amount is None:
            self.fail(field, "must be a decimal string such as \"10.00\"")
        elif decimals(amount) > places:
            self.fail(field, f"at most {places} decimal places")
        else:
            return amount
        return None

    def instant(self, field: str, *, required: bool = False, nullable: bool = False) -> datetime | None:
        value = self._get(field, required, nullable)
        if value is _MISSING or value is None:
            return None
        parsed = parse_instant(value) if isinstance(value, str) else None
        if parsed is None:
            self.fail(field, "must be an ISO 8601 instant with a timezone")
        return parsed

    def present(self, field: str) -> bool:
        return field in self.obj

    def done(self) -> None:
        if self.errors:
            raise validation_error(self.errors)


def check(obj: Any) -> Checker:
    """A Checker over the request body, which must be a JSON object."""
    return Checker(require_object(obj))

