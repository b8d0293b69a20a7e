"""Idempotency keys (Endpoints rule 3 and the idempotency error table).

Scope is (organization, mode, key). The fingerprint of a request is its method, path and canonical JSON
body. A record is claimed (state `running`) before the handler runs and completed with the stored
status and body in the handler's own transaction (`settle`), so a crash can never keep the handler's writes
and lose its key: a same-key retry after a restart replays, it never runs twice. Records still `running` at
start belong to requests whose writes rolled back with them, and are deleted. So:

- same key, same fingerprint, completed -> the stored status and body are replayed, nothing runs;
- same key, same fingerprint, running   -> 409 IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS;
- same key, other fingerprint           -> 409 IDEMPOTENCY_KEY_CONFLICT;
- a record older than 7 days (organization clock) is a tombstone: 409 IDEMPOTENCY_KEY_CONFLICT saying
  the record expired; it is never re-executed;
- a 4xx (and INTERNAL) answer releases the key: the record is deleted and a later request runs;
  PAYOUT_OUTCOME_UNKNOWN keeps it and replays answer 409; REFUND_OUTCOME_UNKNOWN ("may have gone through;
  do not resend") keeps it too and replays answer its 502, so a resend never refunds twice.

Money writes also get the duplicate-body guard: an identical request under another key within 15
minutes of a successful original answers 409 DUPLICATE_REQUEST_DETECTED unless `X-Allow-Duplicate: true`.

Patch points for mutants: `key_pattern`, `lookup`, `fingerprint`, `releases`, `retention`, `duplicate_window`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import timedelta

from ..core.clock import iso
from ..core.errors import ApiError, error_body, field_error
from ..core.faults import Faults
from ..core.operation import Call, Reply
from ..core.store import Store, dumps

Scope = tuple[str, str]  # (org_id, mode)
Settle = Callable[[Reply | ApiError], None]  # records an outcome inside the handler's transaction
Execute = Callable[..., Awaitable[Reply]]  # execute(settle=None): runs the handler in its transaction


def canonical_body(raw: bytes) -> str:
    """Key order and whitespace do not make two requests different; unparseable bodies compare as bytes."""
    try:
        text = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        text.encode("utf-8")  # a "\ud800" escape decodes to a lone surrogate, which cannot be hashed as text
        return text
    except (ValueError, UnicodeError, RecursionError):
        return "raw:" + raw.hex()


class Idempotency:
    def __init__(self, store: Store, faults: Faults) -> None:
        self.store = store
        self.faults = faults
        self.key_pattern = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")
        self.retention = timedelta(days=7)
        self.duplicate_window = timedelta(minutes=15)

    # -- the pieces -----------------------------------------------------------------------------

    def parse_key(self, value: str | None, mode: str) -> str | None:
        if value is None:
            if mode == "required":
                raise ApiError("IDEMPOTENCY_KEY_REQUIRED")
            return None
        if not self.key_pattern.fullmatch(value):
            raise ApiError("IDEMPOTENCY_KEY_INVALID")
        return value

    def fingerprint(self, method: str, path: str, body: str) -> str:
        return hashlib.sha256(f"{method}\n{path}\n{body}".encode()).hexdigest()

    def lookup(self, scope: Scope, key: str) -> sqlite3.Row | None:
        return self.store.one(
            "SELECT * FROM idempotency WHERE org_id = ? AND mode = ? AND key = ?", (*scope, key)
        )

    def releases(self, err: ApiError) -> bool:
        """Whether an error answer frees the key. Only an outcome that may have moved money keeps it."""
        return err.type not in ("PAYOUT_OUTCOME_UNKNOWN", "REFUND_OUTCOME_UNKNOWN")

    @staticmethod
    def allow_duplicate(call: Call) -> bool:
        value = call.headers.get("x-allow-duplicate")
        if value is None:
            return False
        if value != "true":
            raise field_error("X-Allow-Duplicate", "the only accepted value is \"true\"")
        return True

    # -- the flow -------------------------------------------------------------------------------

    async def run(self, call: Call, execute: Execute) -> Reply:
        """Apply the key rules around `execute` (which runs the handler)."""
        op = call.op
        if op.idempotency == "none":
            return await execute()
        key = self.parse_key(call.headers.get("idempotency-key"), op.idempotency)
        if key is None:
            return await execute()
        allow_duplicate = self.allow_duplicate(call) if op.money_write else False
        if self.faults.take(call.org_id, op.op_id, "idempotency_unavailable"):
            raise ApiError("IDEMPOTENCY_UNAVAILABLE")
        scope = (call.org_id, call.mode)
        fingerprint = self.fingerprint(op.method, call.path, canonical_body(call.raw_body) if op.takes_body else "")
        with self.store.tx():
            record = self.lookup(scope, key)
            if record is not None:
                answer = self._answer_existing(record, fingerprint, call)
        if record is not None:  # raised outside the transaction so that a tombstone update is kept
            if isinstance(answer, ApiError):
                raise answer
            return answer
        with self.store.tx():
            if op.money_write and not allow_duplicate:
                self._guard_duplicate(scope, key, fingerprint, call)
            self.store.run(
                "INSERT OR REPLACE INTO idempotency (org_id, mode, key, op_id, fingerprint, state, created_at)"
                " VALUES (?,?,?,?,?,'running',?)",
                (*scope, key, op.op_id, fingerprint, iso(call.now)),
            )
        def settle(outcome: Reply | ApiError) -> None:
            if isinstance(outcome, ApiError):
                self._settle_error(scope, key, outcome, call.request_id)
            else:
                self._complete(scope, key, outcome.status, outcome.body, outcome.resource_id)

        try:
            return await execute(settle)
        except ApiError as err:
            if not err.keeps_writes:  # nothing was written: the record is settled on its own
                self._settle_error(scope, key, err, call.request_id)
            raise
        except BaseException:
            self._release(scope, key)
            raise

    def _answer_existing(self, record: sqlite3.Row, fingerprint: str, call: Call) -> Reply | ApiError:
        if record["created_at"] <= iso(call.now - self.retention):
            if record["body"] is not None:  # retention is over: keep only the tombstone
                self.store.run(
                    "UPDATE idempotency SET body = NULL, state = 'expired' WHERE org_id = ? AND mode = ? AND key = ?",
                    (record["org_id"], record["mode"], record["key"]),
                )
            return ApiError(
                "IDEMPOTENCY_KEY_CONFLICT",
                "The record for this idempotency key expired after 7 days; it is never re-executed. Use a new key.",
            )
        if record["fingerprint"] != fingerprint:
            return ApiError("IDEMPOTENCY_KEY_CONFLICT", "This key was already used with a different request.")
        if record["state"] == "running":
            return ApiError("IDEMPOTENCY_KEY_REQUEST_IN_PROGRESS")
        body = json.loads(record["body"])
        if record["state"] == "error":  # a kept error: fresh requestId, the original one alongside
            body = {**body, "requestId": call.request_id, "originalRequestId": body.get("requestId")}
        return Reply(record["status"], body, record["resource_id"], replayed=True)

    def _guard_duplicate(self, scope: Scope, key: str, fingerprint: str, call: Call) -> None:
        original = self.store.one(
            "SELECT key, resource_id FROM idempotency WHERE org_id = ? AND mode = ? AND fingerprint = ?"
            " AND key != ? AND state = 'done' AND status BETWEEN 200 AND 299 AND created_at > ?"
            " ORDER BY created_at DESC LIMIT 1",
            (*scope, fingerprint, key, iso(call.now - self.duplicate_window)),
        )
        if original is None:
            return
        extra = {"originalIdempotencyKey": original["key"]}
        if original["resource_id"]:
            extra["originalPayoutId"] = original["resource_id"]
        raise ApiError(
            "DUPLICATE_REQUEST_DETECTED",
            "An identical request was accepted under another idempotency key less than 15 minutes ago;"
            " nothing was executed. Resend with the original key to replay it, or with X-Allow-Duplicate: true.",
            **extra,
        )

    def _complete(self, scope: Scope, key: str, status: int, body: object, resource_id: str | None,
                  state: str = "done") -> None:
        self.store.run(
            "UPDATE idempotency SET state = ?, status = ?, body = ?, resource_id = ?"
            " WHERE org_id = ? AND mode = ? AND key = ?",
            (state, status, dumps(body), resource_id, *scope, key),
        )

    def _settle_error(self, scope: Scope, key: str, err: ApiError, request_id: str) -> None:
        if self.releases(err):
            self._release(scope, key)
            return
        status = 409 if err.type == "PAYOUT_OUTCOME_UNKNOWN" else err.status
        self._complete(scope, key, status, {**error_body(err, request_id), "status": status}, None, "error")

    def _release(self, scope: Scope, key: str) -> None:
        self.store.run("DELETE FROM idempotency WHERE org_id = ? AND mode = ? AND key = ?", (*scope, key))
