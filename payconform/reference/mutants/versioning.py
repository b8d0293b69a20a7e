"""Mutants of the Versioning rules: an added operation not served, an added field or enum-valued field of
the wrong JSON type, an error `type` of the server's own. Each is killed by a test of ``suites/versioning``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..operation import Call, Reply
from ..responses import Outgoing
from . import mutant
from .recipients import Handler, around

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("ver-audit-events-unserved", reqs=["VER-ADDED-OPERATIONS"],
        doc="GET audit-events (an operation Versioning rule 8 lists as added) answers 404 ROUTE_NOT_FOUND.")
def _(ref: Reference) -> None:
    @around(ref, "listAuditEvents")
    def _(original: Handler, call: Call) -> Reply:
        raise ref.route_not_found("GET", "/payments/organizations/{orgId}/audit-events")


@mutant("ver-screened-at-epoch", reqs=["VER-CHANGELOG-FIELDS"],
        doc="A recipient's `screenedAt` (an added field) is answered as epoch seconds, a JSON number.")
def _(ref: Reference) -> None:
    def epoch(out: Outgoing) -> None:
        if isinstance(out.body, dict) and isinstance(out.body.get("screenedAt"), str):
            out.body["screenedAt"] = 1700000000

    ref.response_filters.append(epoch)


@mutant("ver-history-type-as-number", reqs=["VER-CHANGELOG-ENUMS"],
        doc="Balance history entries carry `type` as a number (0 funding, 1 payout, 2 reversal), not a string.")
def _(ref: Reference) -> None:
    codes = {"funding": 0, "payout": 1, "reversal": 2}

    @around(ref, "getBalanceHistory")
    def _(original: Handler, call: Call) -> Reply:
        reply = original(call)
        entries = [{**e, "type": codes.get(e.get("type"), 9)} for e in reply.body.get("entries") or []]
        return dataclasses.replace(reply, body={**reply.body, "entries": entries})


@mutant("ver-error-type-renamed", reqs=["VER-ERROR-TYPE-STABLE"],
        doc="`VALIDATION_ERROR` is answered under a type of the server's own, `INVALID_PARAMETERS`.")
def _(ref: Reference) -> None:
    def rename(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "VALIDATION_ERROR":
            out.body["type"] = "INVALID_PARAMETERS"

    ref.response_filters.append(rename)
