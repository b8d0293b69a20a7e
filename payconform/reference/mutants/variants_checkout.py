"""Tolerated variants of the checkout sandbox: shapes the spec leaves open."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from . import variant
from .rewrites import rewrite_replies

if TYPE_CHECKING:
    from ..reference import Reference


def _as_rows(table: Any) -> list[dict[str, Any]]:
    """The scenario table as rows `{minorUnitsEnding, outcome}`, every scalar of the original kept as text."""
    rows = table.get("data") if isinstance(table, dict) else None
    return [{"minorUnitsEnding": row.get("suffix"), "outcome": {k: v for k, v in row.items() if k != "suffix"}}
            for row in rows or [] if isinstance(row, dict)]


@variant("sandbox-scenarios-other-shape",
         doc="GET /sandbox/scenarios answers a bare array of `{minorUnitsEnding, outcome}` rows: the route is only "
             "'Table of amount-driven sandbox outcomes'; its shape is not shown.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "getSandboxScenarios", lambda reply: dataclasses.replace(reply, body=_as_rows(reply.body)))
