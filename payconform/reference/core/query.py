"""Query-string parsing for list routes: one value per parameter, limits, instants, enums.

Every refusal is a 400 VALIDATION_ERROR naming the parameter, as the spec asks for balance transactions
(a repeated parameter, an out-of-range `limit`, an instant without a timezone, an unknown `type`).
"""

from __future__ import annotations

from datetime import datetime

from starlette.datastructures import QueryParams

from .clock import parse_instant
from .errors import field_error


class Query:
    def __init__(self, params: QueryParams) -> None:
        self.params = params

    def get(self, name: str) -> str | None:
        """The parameter's single value; sending it twice is ambiguous, so it is refused."""
        values = self.params.getlist(name)
        if len(values) > 1:
            raise field_error(name, "must not be repeated")
        return values[0] if values else None

    def limit(self, *, default: int, low: int, high: int, clamp: bool = False) -> int:
        """`limit`: an integer; out of range is clamped where the spec says so, else refused."""
        raw = self.get("limit")
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise field_error("limit", "must be an integer") from None
        if clamp:
            return max(low, min(high, value))
        if not low <= value <= high:
            raise field_error("limit", f"must be between {low} and {high}")
        return value

    def instant(self, name: str) -> datetime | None:
        raw = self.get(name)
        if raw is None:
            return None
        value = parse_instant(raw)
        if value is None:
            raise field_error(name, "must be an ISO 8601 instant with a timezone")
        return value

    def csv(self, name: str, allowed: frozenset[str]) -> list[str] | None:
        """Comma-separated values from a known list."""
        raw = self.get(name)
        if raw is None:
            return None
        values = [v.strip() for v in raw.split(",")]
        unknown = [v for v in values if v not in allowed]
        if unknown:
            raise field_error(name, "unknown value(s): " + ", ".join(unknown))
        return values
