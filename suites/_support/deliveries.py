"""Webhook deliveries to this test's mailbox: registering it, waiting for deliveries, and the checks every
delivery must pass (Events > Delivery headers, Event envelope).

A test whose check is not about registering gets this worker's one sandbox endpoint (`reused`), registered
on first use: a sandbox endpoint cannot be deleted with a key (Endpoints > Sandbox webhooks: register and read
deliveries only), so a run that registered one per test would leave the organization one per test, each
pointing at a receiver that is gone once the run ends.

A delivery is waited for by polling the mailbox; where the target has an operator clock, each poll first
moves the organization's clock by zero seconds, which makes the reference's dispatcher run at once (a
target without a clock is simply polled for up to `DISPATCH_WAIT` seconds: "a delivery lands within about
15 seconds"). On a busy organization an endpoint receives every worker's events, and a new one those of the
last 10 minutes, one after another: while others keep arriving the sender is working through that queue,
so the wait goes on, up to `BUSY_WAIT` in all (`awaited`); a delivery that never comes still fails, once a
whole wait passes with nothing arriving or that bound does. Without a clock nothing can make the sender hurry,
and a new endpoint's backlog (on a busy organization, hundreds of deliveries offered in sequence order before
the one a test waits for) drains at the sender's pace: there the bound is `DRAIN_WAIT`, and what the wait
takes past `BUSY_WAIT` is credited to the test's timeout (the sender is working, not hung). How fast a
delivery lands is a check of its own (WH-DISPATCH-15S).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from payconform.suite import (
    Api,
    Contract,
    Delivery,
    Exchange,
    Mailbox,
    Receiver,
    SignatureError,
    expect,
    expect_status,
    fail,
    verify,
    waiting_for,
)

from .events import opt_in_types
from .instants import is_utc_instant
from .profile import items, success

DISPATCH_WAIT = 25.0
FLUSHED_WAIT = 5.0  # with a clock every poll runs the dispatcher: what is due arrives at once
BUSY_WAIT = 90.0  # the longest wait while other deliveries keep arriving (a busy organization's queue); inside a test's 120 s
DRAIN_WAIT = 240.0  # the same without a clock, a new endpoint's backlog draining at the sender's pace
# an attempt is recorded once its answer is in, which a busy service may take seconds to do: a record of it is
# read at growing intervals (few requests) until it shows the attempt or this many seconds have passed
RECORD_WAIT = 20.0
FIRST_PAUSE = 0.25
Flush = Callable[[], Any] | None
_reused: dict[tuple[str, str], tuple[dict, str, str]] = {}  # (receiver, organization) -> endpoint, secret, path


def register(api: Api, contract: Contract, box: Mailbox, events: list[str] | None = None) -> tuple[dict, str]:
    """Register `box` through the sandbox route with a test key: (endpoint, secret)."""
    ex = api.op("createSandboxWebhookEndpoint", json={"url": box.url, "events": list(events or [])})
    expect_status(ex, success(contract, "createSandboxWebhookEndpoint"), "registering a sandbox webhook endpoint")
    body = ex.json
    expect(isinstance(body, dict) and isinstance(body.get("id"), str), "the registered endpoint has no `id`", ex)
    secret = body.get("secret")
    expect(isinstance(secret, str) and secret.startswith("whsec_"),
           f"the registration answer carries no `whsec_` secret (secret: {str(secret)[:10]!r}...)", ex)
    return body, secret


def reused(api: Api, contract: Contract, server: Receiver) -> tuple[dict, str, Mailbox]:
    """This worker's sandbox endpoint in `api`'s organization, opted in to every checkout-payment event
    (payout, batch, approval and endpoint events reach it by default), registered on first use: (endpoint,
    secret, a fresh mailbox at its address for this test). Earlier tests' late deliveries may reach the mailbox
    too, as other workers' events do: tests find theirs by what they made."""
    key = (server.base_url, api.org_id)
    if key not in _reused:
        box = server.mailbox()
        endpoint, secret = register(api, contract, box, opt_in_types())
        _reused[key] = (endpoint, secret, box.path)
    endpoint, secret, path = _reused[key]
    return endpoint, secret, server.mailbox(path)


def endpoints_listed(api: Api, contract: Contract) -> tuple[dict[str, dict[str, Any]], Exchange]:
    """GET the webhook endpoints with an API key: 200, and (rows by `id`, the answer). The envelope is not
    shown, so the rows are where the profile's `listWebhookEndpoints.page.items` says."""
    ex = api.op("listWebhookEndpoints")
    expect_status(ex, 200, "listing webhook endpoints with an API key")
    return {r.get("id"): r for r in items(contract, "listWebhookEndpoints", ex) if isinstance(r, dict)}, ex


def parsed(delivery: Delivery) -> dict[str, Any]:
    try:
        body = json.loads(delivery.body)
    except ValueError:
        fail(f"a delivery body is not JSON: {delivery.body[:200]!r}")
    expect(isinstance(body, dict), f"a delivery body is not a JSON object: {delivery.body[:200]!r}")
    return body


def about(delivery: Delivery, key: str, value: str) -> bool:
    """Whether a delivery's event is about the object whose `data[key]` is `value`."""
    try:
        data = json.loads(delivery.body).get("data")
    except (ValueError, AttributeError):
        return False
    return isinstance(data, dict) and data.get(key) == value


def kind(delivery: Delivery) -> Any:
    """The event type a delivery carries (None when the body is not a JSON object)."""
    return member_of(delivery, "type")


def member_of(delivery: Delivery, key: str) -> Any:
    """A top-level member of a delivered event (None when absent or the body is not a JSON object)."""
    try:
        body = json.loads(delivery.body)
    except ValueError:
        return None
    return body.get(key) if isinstance(body, dict) else None


def busy_bound(flush: Flush) -> float:
    """The longest wait while deliveries keep arriving: `BUSY_WAIT` with a clock, `DRAIN_WAIT` without."""
    return BUSY_WAIT if flush is not None else DRAIN_WAIT


def awaited(box: Mailbox, predicate: Callable[[list[Delivery]], bool], flush: Flush,
            timeout: float = DISPATCH_WAIT, what: str | None = None) -> list[Delivery]:
    """The mailbox's deliveries once `predicate` holds, or once `timeout` seconds pass with no delivery
    arriving, or `busy_bound` seconds in all; time past `BUSY_WAIT` is credited to the test's timeout (see the
    module's docstring). `what` names the deliveries awaited, for a test that times out meanwhile."""
    started = time.monotonic()
    end = started + max(timeout, busy_bound(flush))
    count, seen = -1, box.snapshot()
    with waiting_for(f"{what or 'deliveries'} at {box.url}"):
        while len(seen) > count and not predicate(seen) and time.monotonic() < end:
            count = len(seen)
            now = time.monotonic()
            step = min(timeout, end - now)
            past = now + step - started - BUSY_WAIT
            if flush is None and past > 0:
                box.credit(min(step, past))
            seen = box.wait_for(predicate, step, flush=flush)
    return seen


def wait_for(box: Mailbox, predicate: Callable[[list[Delivery]], bool], flush: Flush, what: str,
             timeout: float = DISPATCH_WAIT) -> list[Delivery]:
    started = time.monotonic()
    seen = awaited(box, predicate, flush, timeout, what)
    expect(predicate(seen), f"{what}: not delivered within {time.monotonic() - started:.0f} s (a wait ends once "
                            f"{timeout:g} s pass with no delivery arriving, or after {busy_bound(flush):g} s); "
                            f"{arrived(seen, box.url)}")
    return seen


def arrived(seen: list[Delivery], url: str) -> str:
    """What did reach the mailbox, for a failure: the event types in order, or a hint when nothing did."""
    if not seen:
        return f"none arrived at {url}: is the receiver reachable from the target?"
    listed = ", ".join(str(kind(d)) for d in seen[:12]) + (", ..." if len(seen) > 12 else "")
    return f"{len(seen)} deliveries arrived: {listed}"


def verified(delivery: Delivery, secrets_: str | list[str]) -> list[str]:
    """The secrets whose signature verifies (our strict verifier, our clock at arrival)."""
    try:
        return verify(secrets_, delivery.header("whk-id"), delivery.header("whk-timestamp"),
                      delivery.header("whk-signature"), delivery.body, now=delivery.received_at)
    except SignatureError as exc:
        fail(f"the delivery's signature does not verify: {exc}; headers {_headers(delivery)}")
    raise AssertionError("unreachable")


def checked(delivery: Delivery, secrets_: str | list[str], type_: str) -> dict[str, Any]:
    """Every check of Delivery headers and Event envelope on one delivery of a `type_` event; its body."""
    verified(delivery, secrets_)
    body = parsed(delivery)
    header_id, version = delivery.header("whk-id"), body.get("apiVersion")
    expect(isinstance(body.get("id"), str) and header_id == body["id"],
           f"`whk-id` is {header_id!r} but body `id` is {body.get('id')!r}")
    expect(type(version) is int and version == 1, f"body `apiVersion` is {version!r}, not the integer 1")
    header_version = delivery.header("Svc-Webhook-Version")
    expect(header_version is not None and header_version.strip() == str(version),
           f"`Svc-Webhook-Version` is {header_version!r}, not equal to body `apiVersion` {version!r}")
    expect(body.get("livemode", "(absent)") is False, f"a sandbox delivery carries `livemode: {body.get('livemode')!r}`")
    expect(body.get("type") == type_, f"the delivery's `type` is {body.get('type')!r}, not {type_!r}")
    expect(is_utc_instant(body.get("createdAt")), f"`createdAt` is {body.get('createdAt')!r}, not ISO 8601 UTC")
    return body


def _headers(delivery: Delivery) -> dict[str, str]:
    names = ("whk-id", "whk-timestamp", "whk-signature", "Svc-Webhook-Version")
    return {n: (delivery.header(n) or "(absent)")[:60] for n in names}


def record_pauses() -> Iterator[float]:
    """The pauses between reads of a record an attempt is written to (the delivery log, an endpoint's health):
    doubling from `FIRST_PAUSE`, together under `RECORD_WAIT` seconds, then none (the caller reads once more
    and judges)."""
    pause, deadline = FIRST_PAUSE, time.monotonic() + RECORD_WAIT
    while (left := deadline - time.monotonic()) > 0:
        yield min(pause, left)
        pause *= 2
