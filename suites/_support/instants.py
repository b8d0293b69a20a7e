"""Instants as the spec writes them: ISO 8601, and in UTC where an envelope says so (one definition, in
``payconform.rules``)."""

from payconform.rules import INSTANT, INSTANT_UTC, is_instant, is_utc_instant

__all__ = ["INSTANT", "INSTANT_UTC", "is_instant", "is_utc_instant"]
