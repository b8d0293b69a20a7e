"""Operator-injected faults: make the next N calls of an operation in an organization slow or failing.

Tests use them to observe behaviour the pristine server never shows on its own: a request still
running (`delay`, for IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS), a given error (`error`, e.g. 503
ORDERS_TEMPORARILY_UNAVAILABLE), a key that cannot be recorded (`idempotency_unavailable`), or a dependency
that does not answer (`timeout`) or refuses to serve (`unavailable`), on a pseudo-operation naming it, whose
answer the server chooses itself; a store that cannot record an operation's writes (`store_unavailable`: the
handler ran, its transaction cannot commit) is answered by the server too. The project's
own tests also kill the process at the worst moment (`crash_after_handler`: right after the handler's
transaction commits, before anything else happens), to prove no write is lost or doubled across a crash.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from . import ids
from .errors import ApiError

KINDS = ("delay", "error", "timeout", "unavailable", "idempotency_unavailable", "store_unavailable",
         "crash_after_handler")
CRASH_EXIT = 137  # the exit status of a process killed by SIGKILL


@dataclass
class Fault:
    id: str
    org_id: str
    operation: str
    kind: str
    remaining: int
    seconds: float = 0.0
    status: int | None = None
    type: str | None = None


class Faults:
    def __init__(self) -> None:
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        fault.id = fault.id or ids.new_id("flt")
        self._faults.append(fault)
        return fault

    def take(self, org_id: str, operation: str, kind: str) -> Fault | None:
        """Consume one use of the oldest matching fault."""
        for fault in self._faults:
            if (fault.org_id, fault.operation, fault.kind) == (org_id, operation, kind):
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    async def before_handler(self, org_id: str, operation: str) -> None:
        """Applied after the idempotency key is claimed, where the handler would run."""
        delay = self.take(org_id, operation, "delay")
        if delay is not None:
            await asyncio.sleep(delay.seconds)
        error = self.take(org_id, operation, "error")
        if error is not None:
            raise ApiError(error.type or "INTERNAL", status=error.status, detail="Injected fault.")

    def before_commit(self, org_id: str, operation: str) -> None:
        """Applied inside the handler's transaction once it has run: a store that cannot record rolls it back."""
        if self.take(org_id, operation, "store_unavailable") is not None:
            raise ApiError("INTERNAL", "The store could not record the write; nothing was recorded.")

    def after_handler(self, org_id: str, operation: str) -> None:
        """Applied once the handler's transaction has committed: a crash fault ends the process there."""
        if self.take(org_id, operation, "crash_after_handler") is not None:
            os._exit(CRASH_EXIT)
