"""Mutants of the Endpoints part for the filters of audit events (`GET /audit-events`).

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.clock import parse_instant
from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant
from ..support.ledger import AUDIT, with_query

if TYPE_CHECKING:
    from ...reference import Reference

FAR_PAST = "1970-01-01T00:00:00.000Z"


@mutant("audit-filters-ignored", reqs=["AUDIT-FILTERS"],
        doc="Audit events ignore `action`, `resourceId`, `actorUserId`, `createdAfter` and `createdBefore`.")
def audit_filters_ignored(ref: Reference) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        return original(with_query(call, **dict.fromkeys(
            ("action", "resourceId", "actorUserId", "createdAfter", "createdBefore"))))


@mutant("audit-created-range-past-or-future", reqs=["AUDIT-FILTERS"],
        doc="`createdAfter`/`createdBefore` only tell the past from the future: a bound before now keeps every "
            "row on its side (none filtered), a bound after now keeps nothing, whatever the rows' times.")
def audit_created_range_past_or_future(ref: Reference) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        after = parse_instant(call.query_params.get("createdAfter") or "")
        before = parse_instant(call.query_params.get("createdBefore") or "")
        if after is None and before is None:  # no bound, or a malformed one the handler refuses
            return original(call)
        nothing = (after is not None and after > call.now) or (before is not None and before < call.now)
        return original(with_query(call, createdAfter=None, createdBefore=FAR_PAST if nothing else None))


@mutant("audit-created-before-ignored", reqs=["AUDIT-FILTERS"],
        doc="Audit events honour `createdAfter` but ignore `createdBefore`.")
def audit_created_before_ignored(ref: Reference) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        return original(with_query(call, createdBefore=None))
