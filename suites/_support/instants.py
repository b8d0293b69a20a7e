"""Instants as the spec writes them: ISO 8601, and in UTC where an envelope says so (one definition, in
``payconform.checks.rules``); read into a datetime, and written as the suite sends them in filters."""

from datetime import datetime, timezone
from typing import Any

from payconform.suite import INSTANT, INSTANT_UTC, is_instant, is_iso8601_date_time, is_utc_instant

__all__ = ["INSTANT", "INSTANT_UTC", "is_instant", "is_iso8601_date_time", "is_utc_instant", "parse_instant",
           "write_instant"]


def parse_instant(value: Any) -> datetime:
    """An ISO 8601 instant (`Z` or an offset) as an aware datetime; ValueError for anything else, a bare date or
    a time without a zone included (`datetime.fromisoformat` alone would read those as naive datetimes)."""
    if not is_instant(value):
        raise ValueError(f"{value!r} is not an ISO 8601 instant with a time zone designator")
    return datetime.fromisoformat(str(value))


def write_instant(instant: datetime) -> str:
    """`instant` in UTC to the millisecond, `Z`-suffixed: the form of the instants the suite sends."""
    return instant.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
