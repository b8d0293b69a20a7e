"""Per-organization clocks and the instant format used on the wire.

Each organization has a persisted offset added to the wall clock, so a test can advance time for its
own organization (key expiry, idempotency retention, the duplicate guard, rate-limit windows) without
disturbing anybody else. `wall` is an instance attribute so a unit test can freeze it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from .store import Store


def utcnow() -> datetime:
    """The real wall clock, timezone-aware."""
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """Instants on the wire: UTC, millisecond precision, `Z` suffix; fixed width so strings sort in time order."""
    utc = dt.astimezone(UTC)
    return f"{utc.year:04d}-{utc:%m-%dT%H:%M:%S}.{dt.microsecond // 1000:03d}Z"  # %Y does not pad years before 1000


def parse_instant(value: str) -> datetime | None:
    """ISO 8601 with a timezone, or None. The spec requires a timezone on filters; naive times are refused."""
    try:
        dt = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if "T" not in value.upper() or dt.tzinfo is None:
        return None
    try:
        return dt.astimezone(UTC)
    except OverflowError:  # an instant at the very edge of the calendar (0001-01-01T00:00:00+01:00)
        return None


def add_years(dt: datetime, years: int) -> datetime:
    """Calendar years (29 February falls back to the 28th), for the one-year / two-year key expiry rules."""
    try:
        return dt.replace(year=dt.year + years)
    except ValueError:
        return dt.replace(year=dt.year + years, day=28)


class Clock:
    """`now(org)` = wall clock + that organization's offset (seconds, persisted in `orgs`)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.wall: Callable[[], datetime] = utcnow
        self._offsets: dict[str, float] = {}

    def offset(self, org_id: str) -> float:
        if org_id not in self._offsets:
            row = self.store.one("SELECT clock_offset FROM orgs WHERE id = ?", (org_id,))
            if row is None:
                return 0.0
            self._offsets[org_id] = row["clock_offset"]
        return self._offsets[org_id]

    def now(self, org_id: str) -> datetime:
        return self.wall() + timedelta(seconds=self.offset(org_id))

    def advance(self, org_id: str, seconds: float) -> datetime:
        offset = self.offset(org_id) + seconds
        self.store.run("UPDATE orgs SET clock_offset = ? WHERE id = ?", (offset, org_id))
        self._offsets[org_id] = offset
        return self.now(org_id)
