"""Tolerated variants of authentication: readings of the challenge flow and of sandbox routes the spec allows."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..responses import Outgoing
from . import variant

if TYPE_CHECKING:
    from ..reference import Reference

CHALLENGE_FIELDS = ("type", "requestId", "payloadToSign")


@variant("challenge-minimal-body",
         doc="The 202 challenge body is exactly the three fields Mode B rule 4 shows: 'a request sent without a "
             "signature answers `202` with body `{type: SIGNATURE_CHALLENGE, requestId, payloadToSign}`' (no "
             "`status`, no `detail`: the 202 is not an error answer).")
def _(ref: Reference) -> None:
    def minimal(out: Outgoing) -> None:
        if out.status == 202 and isinstance(out.body, dict) and out.body.get("type") == "SIGNATURE_CHALLENGE":
            out.body = {name: out.body[name] for name in CHALLENGE_FIELDS if name in out.body}

    ref.response_filters.append(minimal)


@variant("sandbox-scenarios-live-ok",
         doc="A live key reads GET /sandbox/scenarios: the route is 'Table of amount-driven sandbox outcomes', not "
             "marked 'Sandbox only' as the two simulate routes are; only 'Sandbox-only routes refuse a live key'.")
def _(ref: Reference) -> None:
    op = ref.operations["getSandboxScenarios"]
    ref.operations["getSandboxScenarios"] = dataclasses.replace(op, sandbox_only=False)
