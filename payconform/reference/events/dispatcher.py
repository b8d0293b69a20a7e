"""The webhook dispatcher: sends due deliveries, signs them, retries them on the ladder, disables endpoints.

It runs every 15 seconds in the background (Events > Delivery and retries, rule 1) and, so that a test
which moves an organization's clock sees the deliveries that became due without waiting, once more right
after each operator clock advance and each replay (`operator/`). A delivery is due when its
`next_attempt_at` is at or before its organization's clock.

Signing is Standard Webhooks with neutral header names: `whk-id` (the event id), `whk-timestamp` (Unix
seconds of the wall clock when the attempt is signed: the receiver compares it with its own clock, which
the operator clock does not move), `whk-signature` (`v1,<base64 HMAC-SHA256>` over `id.timestamp.body`
with the base64-decoded secret; two entries while a rotated-out secret is still valid) and
`Svc-Webhook-Version` (`1`). The body is the event envelope serialized once; those exact bytes are signed.

Retries (the catalog `contract/catalog/events.yaml` says why this schedule): after a failed attempt the next
one is due after 1 min, 5 min, 15 min, 1 h, 3 h, 6 h, 12 h, 24 h, 24 h, each jittered by +/-20 percent;
after the ninth retry fails the delivery is `dead` with `lastError` and stays in the log. An endpoint with
three dead deliveries and no accepted delivery for five days (since creation or the last resume) is
disabled with `auto_disabled_after_failures`, and `webhook_endpoint.disabled` goes to the other endpoints.

Before sending, each run applies the state changes that fell due (`background.py`), so their events are
recorded (and sent) although nobody read the payout, payment or approval.

A run sends each endpoint's due deliveries one after another in order, endpoints without recent failures
first, at most `concurrency` attempts at once over all runs, each bounded by `connect_timeout` and `timeout`.
When an endpoint does not answer at all (refused, unreachable, timed out), its other due deliveries of the run
fail with the same error without being sent, and are retried on the ladder. So an organization holding
endpoints whose receivers are gone (earlier test runs' loopback ports) costs a run one attempt per such
endpoint. Runs overlap: the background run starts every 15 seconds whether or not the last one has ended, and
an operator's flush runs at once. Each endpoint's deliveries go out under that endpoint's lock, and a delivery
is read again just before its attempt and skipped once another run has sent it; so a long run (a busy
organization's backlog: every event goes to every endpoint, and a new endpoint gets the last ten minutes'
events) holds up neither a new endpoint's deliveries nor a flush beyond the endpoints they share. An
operator's flush (`flush`) waits for its run up to `flush_bound` seconds and lets a longer one go on in the
background, so the operator's call answers within its client's timeout; the suite polls again, and each poll
is another flush.

Patch points for mutants (attributes of this instance): `ladder`, `jitter`, `timeout`, `connect_timeout`,
`concurrency`, `flush_bound`, `serialize`, `timestamp`, `signed_content`, `headers`, `secrets_for`, `is_success`,
`disable_after_dead`, `disable_after_quiet`, `disable_unhealthy`, `announce`, `settle_due`, `due` (the deliveries
a run sends, in order), and the hooks
`after_attempt(client, delivery)` (after each attempt of a run; one endpoint's attempts come in order, other
endpoints' may interleave) and `end_of_run(client)` (after its last), which may send more with
`request(delivery)`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import httpx

from .background import BackgroundServer, settle_due
from ..core.clock import iso

log = logging.getLogger("payconform.reference.dispatcher")

LADDER = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 86400)
DISABLE_AFTER_DEAD = 3
DISABLE_AFTER_QUIET = timedelta(days=5)
DISABLED_REASON = "auto_disabled_after_failures"


async def _nothing_more(*_: Any) -> None:
    """The default of the dispatcher's hooks: a run sends each due delivery once."""


def serialize(envelope: dict[str, Any]) -> bytes:
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def signed_content(msg_id: str, timestamp: str, body: bytes) -> bytes:
    return f"{msg_id}.{timestamp}.".encode() + body


def sign(secret: str, content: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    return "v1," + base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()


def delivery_headers(msg_id: str, timestamp: str, signatures: list[str], api_version: int) -> dict[str, str]:
    return {"content-type": "application/json", "whk-id": msg_id, "whk-timestamp": timestamp,
            "whk-signature": " ".join(signatures), "Svc-Webhook-Version": str(api_version)}


class Dispatcher:
    interval = 15.0

    def __init__(self, ref: BackgroundServer) -> None:
        self.ref = ref
        self.ladder: tuple[float, ...] = LADDER
        self.jitter = 0.2
        self.timeout = 5.0
        self.connect_timeout = 2.0
        self.concurrency = 16
        self.flush_bound = 20.0
        self.serialize = serialize
        self.signed_content = signed_content
        self.headers = delivery_headers
        self.is_success = lambda status: 200 <= status < 300
        self.disable_after_dead = DISABLE_AFTER_DEAD
        self.disable_after_quiet = DISABLE_AFTER_QUIET
        self.timestamp = lambda: str(int(time.time()))
        self.secrets_for = self._secrets
        self.disable_unhealthy = self._disable_unhealthy
        self.announce = self._announce
        self.settle_due = lambda org_id: settle_due(ref, org_id)
        self.after_attempt: Callable[[httpx.AsyncClient, sqlite3.Row], Awaitable[None]] = _nothing_more
        self.end_of_run: Callable[[httpx.AsyncClient], Awaitable[None]] = _nothing_more
        self._locks: dict[str, asyncio.Lock] = {}  # endpoint id -> held while a run sends to it
        self._gate: asyncio.Semaphore | None = None  # `concurrency` attempts at once, over all runs
        self._task: asyncio.Task[None] | None = None
        self._runs: set[asyncio.Task[int]] = set()  # background runs in flight (kept from the collector)
        self._tls: Any = None  # the runs' TLS context, made once: loading the CA bundle costs each run 20 ms

    def ensure_running(self) -> None:
        """Start the 15-second background loop once, from inside the server's event loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        """A run every `interval` seconds, whether or not the last one has ended (see the module's docstring)."""
        while True:
            await asyncio.sleep(self.interval)
            self._start()

    async def flush(self, org_id: str) -> None:
        """An operator's run for one organization, waited for up to `flush_bound` seconds (see the module's
        docstring)."""
        self.ensure_running()
        await asyncio.wait({self._start(org_id)}, timeout=self.flush_bound)

    def _start(self, org_id: str | None = None) -> asyncio.Task[int]:
        """A run in the background, kept from the collector until it ends."""
        task = asyncio.get_running_loop().create_task(self._background_run(org_id))
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        return task

    async def _background_run(self, org_id: str | None = None) -> int:
        try:
            return await self.run(org_id)
        except Exception:
            log.exception("dispatcher run failed")
            return 0

    async def run(self, org_id: str | None = None) -> int:
        """Attempt every due delivery (of one organization, or all); how many were attempted. When it returns,
        every delivery due when it started has been attempted, by this run or another."""
        self.ensure_running()
        self.settle_due(org_id)
        timeout = httpx.Timeout(self.timeout, connect=min(self.connect_timeout, self.timeout))
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        if self._tls is None:
            self._tls = httpx.create_ssl_context()
        async with httpx.AsyncClient(timeout=timeout, limits=limits, follow_redirects=False,
                                     verify=self._tls) as client:
            counts = await asyncio.gather(*(self._send_queue(client, queue)
                                            for queue in self._queues(self.due(org_id))))
            await self.end_of_run(client)
        with self.ref.store.tx():
            self.disable_unhealthy(org_id)
        return sum(counts)

    def _queues(self, due: list[sqlite3.Row]) -> list[list[sqlite3.Row]]:
        """The due deliveries per endpoint, each in the order given; endpoints without failures first."""
        queues: dict[str, list[sqlite3.Row]] = {}
        for delivery in due:
            queues.setdefault(delivery["endpoint_id"], []).append(delivery)
        failing = {r["id"] for r in self.ref.store.all(
            "SELECT id FROM webhook_endpoints WHERE consecutive_failures > 0 AND id IN"
            f" ({','.join('?' * len(queues))})", tuple(queues))} if queues else set()
        return sorted(queues.values(), key=lambda queue: queue[0]["endpoint_id"] in failing)

    async def _send_queue(self, client: httpx.AsyncClient, queue: list[sqlite3.Row]) -> int:
        """One endpoint's due deliveries in order, under its lock, each read again first (another run may have
        sent it meanwhile); once nobody answers, the rest fail with that error unsent (retried on the ladder
        like any failed attempt). How many were attempted."""
        if self._gate is None:
            self._gate = asyncio.Semaphore(self.concurrency)
        attempted = 0
        async with self._locks.setdefault(queue[0]["endpoint_id"], asyncio.Lock()):
            for at, queued in enumerate(queue):
                delivery = self._still_due(queued)
                if delivery is None:
                    continue
                async with self._gate:
                    unanswered = await self._attempt(client, delivery)
                attempted += 1
                await self.after_attempt(client, delivery)
                if unanswered is not None:
                    unsent = [d for d in map(self._still_due, queue[at + 1:]) if d is not None]
                    self._fail_unsent(unsent, unanswered)
                    return attempted + len(unsent)
        return attempted

    def _still_due(self, delivery: sqlite3.Row) -> sqlite3.Row | None:
        """The delivery as it stands now, if it is still due (not sent by another run since it was listed)."""
        row = self.ref.store.one("SELECT * FROM webhook_deliveries WHERE id = ?", (delivery["id"],))
        if row is None or row["status"] not in ("pending", "failed") or row["next_attempt_at"] is None:
            return None
        return row if row["next_attempt_at"] <= iso(self.ref.clock.now(row["org_id"])) else None

    def _fail_unsent(self, deliveries: list[sqlite3.Row], error: str) -> None:
        with self.ref.store.tx():
            for delivery in deliveries:
                self._record(delivery, self.ref.clock.now(delivery["org_id"]), error)

    def due(self, org_id: str | None) -> list[sqlite3.Row]:
        store = self.ref.store
        orgs = [org_id] if org_id else [r["org_id"] for r in store.all(
            "SELECT DISTINCT org_id FROM webhook_deliveries WHERE status IN ('pending', 'failed')")]
        due: list[sqlite3.Row] = []
        for org in orgs:
            now = iso(self.ref.clock.now(org))
            due += store.all(
                "SELECT * FROM webhook_deliveries WHERE org_id = ? AND status IN ('pending', 'failed')"
                " AND next_attempt_at <= ? AND endpoint_id IN"
                f" (SELECT id FROM webhook_endpoints WHERE {self.ref.events.active}) ORDER BY next_attempt_at, seq",
                (org, now))
        return due

    def _secrets(self, endpoint: sqlite3.Row, now: datetime) -> list[str]:
        keys = [endpoint["secret"]]
        if endpoint["previous_secret"] and endpoint["previous_valid_until"] > iso(now):
            keys.append(endpoint["previous_secret"])
        return keys

    def request(self, delivery: sqlite3.Row) -> tuple[sqlite3.Row, bytes, dict[str, str]]:
        """One POST of this delivery as sent now: (its endpoint, the body, the headers, freshly signed)."""
        ref = self.ref
        endpoint = ref.store.one("SELECT * FROM webhook_endpoints WHERE id = ?", (delivery["endpoint_id"],))
        event = ref.events.get(delivery["event_id"])
        assert endpoint is not None and event is not None
        envelope = ref.events.envelope(event)
        body = self.serialize(envelope)
        timestamp = self.timestamp()
        content = self.signed_content(envelope["id"], timestamp, body)
        now = ref.clock.now(delivery["org_id"])
        signatures = [sign(secret, content) for secret in self.secrets_for(endpoint, now)]
        return endpoint, body, self.headers(envelope["id"], timestamp, signatures, envelope["apiVersion"])

    async def _attempt(self, client: httpx.AsyncClient, delivery: sqlite3.Row) -> str | None:
        """One attempt, recorded; its error when nobody answered (refused, unreachable, timed out), else None."""
        ref = self.ref
        endpoint, body, headers = self.request(delivery)
        error, unanswered = None, None
        try:
            answer = await client.post(endpoint["url"], content=body, headers=headers)
            if not self.is_success(answer.status_code):
                error = f"HTTP {answer.status_code}"
        except httpx.ConnectTimeout:
            error = unanswered = f"no connection within {min(self.connect_timeout, self.timeout):g} s"
        except httpx.TimeoutException:
            error = unanswered = f"timeout after {self.timeout:g} s"
        except httpx.HTTPError as exc:
            error = unanswered = f"connection failed: {type(exc).__name__}"
        with ref.store.tx():
            self._record(delivery, ref.clock.now(delivery["org_id"]), error)
        return unanswered

    def _record(self, delivery: sqlite3.Row, now: datetime, error: str | None) -> None:
        store, at = self.ref.store, iso(now)
        attempts = delivery["attempts"] + 1
        if error is None:
            store.run("UPDATE webhook_deliveries SET status = 'succeeded', attempts = ?, next_attempt_at = NULL,"
                      " last_attempt_at = ?, last_error = NULL, updated_at = ? WHERE id = ?",
                      (attempts, at, at, delivery["id"]))
            store.run("UPDATE webhook_endpoints SET consecutive_failures = 0, last_success_at = ? WHERE id = ?",
                      (at, delivery["endpoint_id"]))
            return
        retry = attempts - 1  # retries already made
        if retry < len(self.ladder):
            delay = self.ladder[retry] * random.uniform(1 - self.jitter, 1 + self.jitter)
            status, next_at = "failed", iso(now + timedelta(seconds=delay))
        else:
            status, next_at = "dead", None
        store.run("UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?,"
                  " last_error = ?, updated_at = ? WHERE id = ?",
                  (status, attempts, next_at, at, error, at, delivery["id"]))
        store.run("UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1, last_failure_at = ?"
                  " WHERE id = ?", (at, delivery["endpoint_id"]))

    def _disable_unhealthy(self, org_id: str | None) -> None:
        """Disable every endpoint with three dead deliveries and no accepted one for five days (since its
        creation or last resume); `webhook_endpoint.disabled` goes to the other endpoints."""
        store = self.ref.store
        rows = store.all(
            "SELECT e.*, COUNT(d.id) AS dead FROM webhook_endpoints e JOIN webhook_deliveries d"
            " ON d.endpoint_id = e.id AND d.status = 'dead' AND d.last_attempt_at >= e.health_since"
            " WHERE e.deleted_at IS NULL AND e.enabled = 1 AND e.disabled_reason IS NULL"
            + (" AND e.org_id = ?" if org_id else "") + " GROUP BY e.id", (org_id,) if org_id else ())
        for endpoint in rows:
            now = self.ref.clock.now(endpoint["org_id"])
            quiet_since = max(endpoint["last_success_at"] or "", endpoint["health_since"])
            if endpoint["dead"] < self.disable_after_dead or quiet_since > iso(now - self.disable_after_quiet):
                continue
            store.run("UPDATE webhook_endpoints SET disabled_reason = ? WHERE id = ?", (DISABLED_REASON, endpoint["id"]))
            self.announce(endpoint, now)

    def _announce(self, endpoint: sqlite3.Row, now: datetime) -> None:
        """`webhook_endpoint.disabled` (data not shown in the spec: the endpoint id and the reason); it routes
        to the other endpoints because this one no longer receives anything."""
        self.ref.events.record(endpoint["org_id"], endpoint["mode"], "webhook_endpoint.disabled",
                               {"endpointId": endpoint["id"], "disabledReason": DISABLED_REASON}, now)
