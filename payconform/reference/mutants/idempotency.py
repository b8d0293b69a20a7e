"""Mutants of the idempotency rules (Endpoints rule 3, the idempotency errors, the key length limit)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("idem-replay-executes-twice", reqs=["IDEM-REPLAY"],
        doc="A request repeated with the same key and body runs the handler again instead of replaying.")
def _(ref: Reference) -> None:
    ref.idempotency.lookup = lambda scope, key: None  # type: ignore[method-assign]


@mutant("idem-conflict-undetected", reqs=["IDEM-CONFLICT"],
        doc="The same key with a different body replays the first answer instead of 409 IDEMPOTENCY_KEY_CONFLICT.")
def _(ref: Reference) -> None:
    original = ref.idempotency.fingerprint
    ref.idempotency.fingerprint = lambda method, path, body: original(method, path, "")  # type: ignore[method-assign]


@mutant("idem-4xx-keeps-key", reqs=["IDEM-4XX-RELEASES"],
        doc="A 4xx answer keeps the key: a corrected retry with the same key replays the error.")
def _(ref: Reference) -> None:
    ref.idempotency.releases = lambda err: err.status >= 500 and err.type != "PAYOUT_OUTCOME_UNKNOWN"  # type: ignore[method-assign]


@mutant("internal-keeps-key", reqs=["IDEM-500-RELEASES"],
        doc="A 500 INTERNAL answer keeps the key: the same request sent again replays the 500 instead of running.")
def _(ref: Reference) -> None:
    kept = ("PAYOUT_OUTCOME_UNKNOWN", "REFUND_OUTCOME_UNKNOWN", "INTERNAL")
    ref.idempotency.releases = lambda err: err.type not in kept  # type: ignore[method-assign]


@mutant("idem-key-256-accepted", reqs=["IDEM-CHARSET", "LIMIT-IDEM-KEY-LENGTH"],
        doc="A 256-character Idempotency-Key is accepted instead of 400 IDEMPOTENCY_KEY_INVALID.")
def _(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^[A-Za-z0-9_.:-]{1,256}$")
