"""Instants as the spec writes them: ISO 8601, and in UTC where an envelope says so."""

from __future__ import annotations

import re
from typing import Any

INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
INSTANT_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$")


def is_instant(value: Any) -> bool:
    """An ISO 8601 instant with a time zone designator."""
    return isinstance(value, str) and INSTANT.match(value) is not None


def is_utc_instant(value: Any) -> bool:
    """An ISO 8601 instant in UTC (`Z` or `+00:00`)."""
    return isinstance(value, str) and INSTANT_UTC.match(value) is not None
