"""Events > Delivery headers, Event envelope, the event feed: checks on a real delivery, with a test key only.

The worker's sandbox endpoint (registered once) delivers to this test's mailbox, a payout is created, and its
`payout.pending` delivery is checked: signature over the raw bytes with the secret returned at registration
(our strict verifier, our clock), timestamp window, `whk-id` = body `id` = feed row, `Svc-Webhook-Version` = body
`apiVersion` (integer 1), `livemode: false`, the type among the 22, `data` the flat `WebhookPayout`, and the
same event object in the feed; a payout waiting on the organization's own funds is announced with
`requiresFunding: true`. The feed is read from just before the delivered event (`since` is a decimal
`sequence`, so `since = sequence - 1` is the last point strictly before it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from payconform.suite import Contract, Delivery, Mailbox, expect

from .._support.answers import by_id, contains
from .._support.deliveries import about, kind, parsed, reused, verified, wait_for
from .._support.events import event_types, feed, has
from .._support.instants import is_utc_instant
from .._support.payouts import create_payout, create_self_funded, payout_problems

NEEDS = ("api_key", "profile", "webhook_receiver")


@dataclass
class Pending:
    box: Mailbox
    secret: str
    payout: dict[str, Any]
    sent: dict[str, Any]
    delivery: Delivery
    body: dict[str, Any]


@pytest.fixture
def pending(api, contract: Contract, unique, webhook_receiver: Mailbox, webhook_server, flusher) -> Pending:
    """The worker's sandbox endpoint, this test's mailbox at it, and the first delivery about a new payout
    (`webhook_receiver` skips the test when the target cannot reach the receiver)."""
    _, secret, box = reused(api, contract, webhook_server)
    ex = create_payout(api, contract, unique)
    payout_id = ex.json["payoutId"]
    seen = wait_for(box, lambda ds: any(about(d, "payoutId", payout_id) for d in ds),
                    flusher(api.org_id), f"an event about payout {payout_id}")
    delivery = next(d for d in seen if about(d, "payoutId", payout_id))
    return Pending(box, secret, ex.json, ex.request.json, delivery, parsed(delivery))


def _feed_row(api, event: dict[str, Any]) -> dict[str, Any] | None:
    sequence = event.get("sequence")
    expect(isinstance(sequence, str) and sequence.isdigit(), f"`sequence` is {sequence!r}, not a decimal string")
    return by_id(feed(api, found=has(event.get("id")), since=str(int(sequence) - 1))).get(event.get("id"))


@pytest.mark.req("EVT-STANDARD-WEBHOOKS", "EVT-SIGNED-CONTENT", "EVT-HEADER-SIGNATURE", "EVT-ROUTING-DEFAULT")
@pytest.mark.needs(*NEEDS)
def test_signature_verifies_over_the_raw_body(pending: Pending) -> None:
    """The endpoint listed no `events`: the payout event reaches it by default (Routing of events)."""
    verified(pending.delivery, pending.secret)


@pytest.mark.smoke
@pytest.mark.req("EVT-HEADER-TIMESTAMP")
@pytest.mark.needs(*NEEDS)
def test_timestamp_is_integer_seconds_within_five_minutes(pending: Pending) -> None:
    stamp = pending.delivery.header("whk-timestamp")
    expect(stamp is not None and stamp.isascii() and stamp.isdigit(), f"`whk-timestamp` is {stamp!r}, not Unix seconds")
    skew = pending.delivery.received_at - int(stamp or 0)
    expect(abs(skew) <= 300, f"`whk-timestamp` {stamp} is {skew:.0f} s from our clock at arrival (limit 300 s)")


@pytest.mark.req("EVT-HEADER-ID", "EVT-ID")
@pytest.mark.needs(*NEEDS)
def test_whk_id_is_the_event_id_and_the_feed_row(api, pending: Pending) -> None:
    header, body_id = pending.delivery.header("whk-id"), pending.body.get("id")
    expect(isinstance(body_id, str) and header == body_id, f"`whk-id` is {header!r} but body `id` is {body_id!r}")
    expect(_feed_row(api, pending.body) is not None, f"the feed has no row with id {body_id!r}")


@pytest.mark.req("EVT-HEADER-VERSION", "EVT-API-VERSION", "VER-WEBHOOK-API-VERSION")
@pytest.mark.needs(*NEEDS)
def test_version_header_equals_integer_api_version(pending: Pending) -> None:
    header, version = pending.delivery.header("Svc-Webhook-Version"), pending.body.get("apiVersion")
    expect(type(version) is int and version == 1, f"body `apiVersion` is {version!r}, not the integer 1")
    expect(header is not None and header.strip() == str(version),
           f"`Svc-Webhook-Version` is {header!r}, not equal to body `apiVersion` {version!r}")


@pytest.mark.req("EVT-LIVEMODE", "EVT-SANDBOX-LIVEMODE")
@pytest.mark.needs(*NEEDS)
def test_sandbox_delivery_has_livemode_false(pending: Pending) -> None:
    livemode = pending.body.get("livemode", "(absent)")
    expect(livemode is False, f"a sandbox delivery carries `livemode: {livemode!r}`")


@pytest.mark.req("EVT-CREATED-AT", "EVT-SEQUENCE")
@pytest.mark.needs(*NEEDS)
def test_envelope_created_at_and_sequence(pending: Pending) -> None:
    body = pending.body
    expect(is_utc_instant(body.get("createdAt")), f"`createdAt` is {body.get('createdAt')!r}, not ISO 8601 UTC")
    sequence = body.get("sequence")
    expect(isinstance(sequence, str) and sequence.isascii() and sequence.isdigit(),
           f"`sequence` is {sequence!r}, not a decimal string")


@pytest.mark.req("EVT-PAYOUT-PENDING", "EVT-DATA-PAYOUT", "EVT-ONE-PER-CHANGE")
@pytest.mark.needs(*NEEDS)
def test_payout_pending_carries_the_flat_payout(api, contract: Contract, pending: Pending) -> None:
    payout_id = pending.payout["payoutId"]
    rows = [r for r in feed(api, found=has(pending.body.get("id")), since=str(int(pending.body["sequence"]) - 1),
                            type="payout.pending")
            if isinstance(r.get("data"), dict) and r["data"].get("payoutId") == payout_id]
    expect(len(rows) == 1, f"the feed holds {len(rows)} `payout.pending` events for payout {payout_id}, not one")
    data = rows[0]["data"]
    problems = payout_problems(data, pending.sent, contract.machine("payout")["states"])
    expect(not problems, "`data` of `payout.pending` is not the flat payout: " + "; ".join(problems))
    expect(data.get("status") == "pending", f"`payout.pending` carries `status: {data.get('status')!r}`")
    expect(rows[0].get("type") in event_types(), f"`type` {rows[0].get('type')!r} is not one of the 22")


@pytest.mark.req("EVT-PAYOUT-PENDING")
@pytest.mark.needs("crypto_key", "profile", "webhook_receiver")
def test_payout_pending_of_a_payout_awaiting_own_funds_requires_funding(
        api_as, contract: Contract, unique, webhook_receiver: Mailbox, webhook_server, flusher) -> None:
    """A payout waiting on the organization's own funds (profile `sandbox.self_funded`) is announced with
    `requiresFunding: true`."""
    api = api_as("crypto_key")
    _, _, box = reused(api, contract, webhook_server)
    payout_id = create_self_funded(api, contract, unique).json["payoutId"]

    def announced(d: Delivery) -> bool:
        return kind(d) == "payout.pending" and about(d, "payoutId", payout_id)

    seen = wait_for(box, lambda ds: any(map(announced, ds)), flusher(api.org_id), f"`payout.pending` of {payout_id}")
    flag = parsed(next(filter(announced, seen)))["data"].get("requiresFunding", "(absent)")
    expect(flag is True, f"`payout.pending` of payout {payout_id}, which waits on the organization's own funds,"
                         f" carries `requiresFunding: {flag!r}`: 'Payout accepted, not yet moving; `requiresFunding:"
                         " true` if waiting on the organization'")


@pytest.mark.req("FEED-SAME-OBJECTS", "EVT-DATA-IMMUTABLE")
@pytest.mark.needs(*NEEDS)
def test_feed_returns_the_delivered_object(api, pending: Pending) -> None:
    row = _feed_row(api, pending.body)
    expect(row is not None, f"the feed has no row with id {pending.body.get('id')!r}")
    assert row is not None
    differs = [k for k in ("id", "sequence", "type", "createdAt", "apiVersion", "livemode", "data")
               if not contains(row.get(k), pending.body.get(k))]
    expect(not differs, f"the feed row differs from the delivered event in {differs}")


@pytest.mark.req("FEED-SINCE", "FEED-ROUTE")
@pytest.mark.needs(*NEEDS)
def test_feed_since_is_strictly_later(api, contract: Contract, unique, pending: Pending) -> None:
    first = pending.body
    second = create_payout(api, contract, unique).json["payoutId"]
    rows = feed(api, found=lambda rs: any(isinstance(r.get("data"), dict) and r["data"].get("payoutId") == second
                                          for r in rs), since=first["sequence"])
    expect(first["id"] not in by_id(rows), f"`since={first['sequence']}` returned the event of that sequence itself")
    expect(any(isinstance(r.get("data"), dict) and r["data"].get("payoutId") == second for r in rows),
           f"`since={first['sequence']}` did not return the later event of payout {second}")
    later = [r.get("sequence") for r in rows]
    expect(all(isinstance(s, str) and s.isdigit() and int(s) > int(first["sequence"]) for s in later),
           f"`since={first['sequence']}` returned sequences {later[:10]}")


@pytest.mark.req("FEED-TYPE-FILTER")
@pytest.mark.needs(*NEEDS)
def test_feed_type_filter(api, pending: Pending) -> None:
    since = str(int(pending.body["sequence"]) - 1)
    kept = feed(api, found=has(pending.body.get("id")), since=since, type="payout.pending")
    expect(pending.body["id"] in by_id(kept), "`type=payout.pending` left out a payout.pending event")
    expect(all(r.get("type") == "payout.pending" for r in kept),
           f"`type=payout.pending` returned types {sorted({r.get('type') for r in kept})}")
    other = feed(api, since=since, type="payout_batch.failed")
    expect(pending.body["id"] not in by_id(other), "`type=payout_batch.failed` returned a payout.pending event")
