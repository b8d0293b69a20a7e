"""Mutants of the Limits part: the rate limits, Retry-After, list sizes and key lengths.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..core.clock import iso
from ..core.operation import Call, Reply
from ..core.responses import Outgoing
from ..events.webhook_endpoints import delivery_json
from .patching import Handler, around
from .registry import mutant
from .support.ledger import AUDIT, BTX, HISTORY, limit_asked, with_query
from .support.requests import on_429

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("batch-submission-unlimited", reqs=["RATE-BATCH"],
        doc="Batch submission has no limit of its own: only the default 100 per minute applies.")
def batch_submission_unlimited(ref: Reference) -> None:
    ref.ratelimit.per_operation_limits.pop("createPayoutBatch", None)


@mutant("webhooks-rotation-overlap-one-hour", reqs=["ROT-WEBHOOK-SECRET-OVERLAP"],
        doc="After rotation the old secret signs for one hour, not 24.")
def webhooks_rotation_overlap_one_hour(ref: Reference) -> None:
    original = ref.dispatcher.secrets_for

    def secrets_for(endpoint: Any, now: datetime) -> list[str]:
        keys = original(endpoint, now)
        until = endpoint["previous_valid_until"]
        if until and datetime.fromisoformat(until) - now < timedelta(hours=23):
            return keys[:1]
        return keys

    ref.dispatcher.secrets_for = secrets_for


@mutant("webhooks-delivery-log-unbounded", reqs=["WH-DELIVERY-LOG-LIMIT"],
        doc="The delivery list returns every attempt, not the 50 newest.")
def webhooks_delivery_log_unbounded(ref: Reference) -> None:
    ref.events.delivery_log = 100_000


@mutant("webhooks-delivery-log-oldest", reqs=["WH-DELIVERY-LOG-LIMIT"],
        doc="Both delivery lists hold the 50 oldest attempts, not the 50 newest.")
def webhooks_delivery_log_oldest(ref: Reference) -> None:
    @around(ref, "listSandboxWebhookDeliveries", "listWebhookEndpointDeliveries")
    def delivery_list(original: Handler, call: Call) -> Reply:
        reply = original(call)
        rows = ref.store.all("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at, id LIMIT ?",
                             (call.params["endpointId"], ref.events.delivery_log))
        return dataclasses.replace(reply, body=[delivery_json(r) for r in rows])


@mutant("webhooks-bulk-replay-unbounded", reqs=["WH-BULK-REPLAY-LIMIT"],
        doc="Bulk replay requeues every matching delivery, beyond 1,000.")
def webhooks_bulk_replay_unbounded(ref: Reference) -> None:
    ref.events.bulk_replay_max = 100_000


@mutant("idem-expired-key-reexecutes", reqs=["IDEM-RETENTION"],
        doc="A key older than the 7-day retention is forgotten and the request runs again.")
def idem_expired_key_reexecutes(ref: Reference) -> None:
    lookup = ref.idempotency.lookup

    def unexpired(scope: tuple[str, str], key: str):
        record = lookup(scope, key)
        horizon = iso(ref.clock.now(scope[0]) - ref.idempotency.retention)
        return None if record is not None and record["created_at"] <= horizon else record

    ref.idempotency.lookup = unexpired  # type: ignore[method-assign]


@mutant("idem-retention-one-day", reqs=["IDEM-RETENTION"],
        doc="Idempotency records are kept one day instead of 7: a key resent on day six is refused as expired "
            "instead of replayed.")
def idem_retention_one_day(ref: Reference) -> None:
    ref.idempotency.retention = timedelta(days=1)


@mutant("dup-window-1-minute", reqs=["DUP-WINDOW"],
        doc="The duplicate-body guard lasts one minute instead of 15.")
def dup_window_1_minute(ref: Reference) -> None:
    ref.idempotency.duplicate_window = timedelta(minutes=1)


@mutant("dup-window-never-ends", reqs=["DUP-WINDOW"],
        doc="The duplicate-body guard never ends: the identical body is refused long after 15 minutes.")
def dup_window_never_ends(ref: Reference) -> None:
    ref.idempotency.duplicate_window = timedelta(days=3650)


@mutant("ledger-limit-non-integer-500", reqs=["LIMIT-LIST-ROUTES"],
        doc="Balance history, balance transactions and audit events crash (500 INTERNAL) on a `limit` that is not one"
            " plain integer: text, a decimal, empty, or given twice.")
def ledger_limit_non_integer_500(ref: Reference) -> None:
    for op_id in (HISTORY, BTX, AUDIT):
        @around(ref, op_id)
        def handler(original: Handler, call: Call) -> Reply:
            values = call.query_params.getlist("limit")
            if values and (len(values) > 1 or not values[0].lstrip("-").isdigit()):
                raise ValueError(f"limit {values!r} is not an integer")
            return original(call)


@mutant("audit-limit-overflow-500", reqs=["LIMIT-LIST-ROUTES"],
        doc="Audit events crash (500 INTERNAL) on a `limit` beyond 32 bits instead of following the route's rule.")
def audit_limit_overflow_500(ref: Reference) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        limit = limit_asked(call)
        if limit is not None and abs(limit) >= 2**31:
            raise OverflowError("limit does not fit a 32-bit integer")
        return original(call)


@mutant("limit-one-too-many", reqs=["LIMIT-LIST-ROUTES"],
        doc="History, balance transactions and audit events return one row more than the `limit` asked for.")
def limit_one_too_many(ref: Reference) -> None:
    @around(ref, HISTORY, BTX, AUDIT)
    def listing(original: Handler, call: Call) -> Reply:
        limit = limit_asked(call)
        return original(with_query(call, limit=str(limit + 1)) if limit is not None and 1 <= limit < 100 else call)


@mutant("history-rate-default", reqs=["RATE-HISTORY"],
        doc="Balance history has no limit of its own: only the default 100 per minute applies.")
def history_rate_default(ref: Reference) -> None:
    ref.ratelimit.per_operation_limits = {}


@mutant("rate-limit-too-strict", reqs=["RATE-DEFAULT"],
        doc="The 100th request of a minute is already refused (99 per minute).")
def rate_limit_too_strict(ref: Reference) -> None:
    ref.ratelimit.per_key_limit = 99


@mutant("rate-limit-after-handler", reqs=["RATE-REFUSED-BEFORE-HANDLER"],
        doc="The request over the limit runs its handler, then answers 429.")
def rate_limit_after_handler(ref: Reference) -> None:
    check_key, run = ref.ratelimit.check_key, ref.idempotency.run
    ref.ratelimit.check_key = lambda principal: None  # type: ignore[method-assign]

    async def run_then_limit(call: Call, execute: Callable[[], Awaitable[Reply]]) -> Reply:
        reply = await run(call, execute)
        check_key(call.principal)
        return reply

    ref.idempotency.run = run_then_limit  # type: ignore[method-assign]


@mutant("retry-after-too-short", reqs=["RATE-RETRY-AFTER"],
        doc="Retry-After always says 1 second, though the window stays closed longer: it is not authoritative.")
def retry_after_too_short(ref: Reference) -> None:
    on_429(ref, lambda out: out.headers.update({"Retry-After": "1"}))


@mutant("retry-after-missing", reqs=["RATE-RETRY-AFTER"], doc="429 answers carry no Retry-After header.")
def retry_after_missing(ref: Reference) -> None:
    def drop(out: Outgoing) -> None:
        if out.status == 429:
            out.headers.pop("Retry-After", None)

    ref.response_filters.append(drop)


@mutant("rate-limit-off", reqs=["RATE-DEFAULT"], doc="No per-credential rate limit: request 101 in a minute is served.")
def rate_limit_off(ref: Reference) -> None:
    ref.ratelimit.per_key_limit = 10**9
