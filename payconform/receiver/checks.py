"""The receiver checks: one function per behaviour, each registered with the requirement it shows
(`contract/requirements.yaml`, entries of `subject: receiver`). A check raises `CheckFailed` (or
`CheckSkipped`); it passes when it returns. They run in the order they are defined here.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from .deliveries import encode
from .session import CheckFailed, CheckSkipped, Session

TOLERANCE_MARGIN = 60  # seconds either side of the five-minute tolerance
ANSWER_BOUND_SECONDS = 5.0  # the reference dispatcher's timeout; the spec shows none
UNKNOWN_TYPES = ("vendor_extension.noted", "payout.held_for_review")


@dataclass(frozen=True)
class Check:
    name: str
    requirement: str
    function: Callable[[Session], None]
    needs: tuple[str, ...]


CHECKS: list[Check] = []


def check(name: str, requirement: str, *, needs: tuple[str, ...] = ()) -> Callable:
    def register(function: Callable[[Session], None]) -> Callable[[Session], None]:
        CHECKS.append(Check(name, requirement, function, needs))
        return function
    return register


def other_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def _bare(signature: str) -> str:
    """The base64 of a `v1,<base64>` entry."""
    return signature.split(",", 1)[1]


# -- RCV-SIGNED-CONTENT ------------------------------------------------------------------------------------

@check("valid-deliveries", "RCV-SIGNED-CONTENT")
def valid_deliveries(s: Session) -> None:
    """A delivery of each of the 22 event types, signed as the spec says, is answered 2xx."""
    for event_type in s.factory.types:
        s.accepted(s.factory.signed(s.factory.event(event_type)), f"a validly signed `{event_type}` delivery")


@check("wrong-secret", "RCV-SIGNED-CONTENT")
def wrong_secret(s: Session) -> None:
    """A delivery signed with another secret is not answered 2xx."""
    event = s.factory.event("payout.completed")
    s.refused(s.factory.signed(event, secret=other_secret()), "a delivery signed with another secret")


@check("signature-over-other-bytes", "RCV-SIGNED-CONTENT")
def other_bytes(s: Session) -> None:
    """A body changed after signing (another amount) is not answered 2xx."""
    event = s.factory.event("payout.completed")
    original = encode(event)
    event["data"]["destinationAmount"] = "9991.50"
    s.refused(s.factory.signed(event, signed_body=original), "a body that differs from the bytes signed")


@check("signature-over-other-id", "RCV-SIGNED-CONTENT")
def other_id(s: Session) -> None:
    """A signature over the same body under another `whk-id` is not answered 2xx (the id is signed too)."""
    event = s.factory.event("payout.completed")
    s.refused(s.factory.signed(event, signed_id=s.factory.event("payout.completed")["id"]),
              "a signature computed over another `whk-id`")


@check("missing-headers", "RCV-SIGNED-CONTENT")
def missing_headers(s: Session) -> None:
    """A delivery without `whk-id`, `whk-timestamp` or `whk-signature` is not answered 2xx."""
    for name in ("id", "timestamp", "signature"):
        header = s.factory.header(name)
        s.refused(s.factory.signed(s.factory.event("payout.completed"), omit=header),
                  f"a delivery without the `{header}` header")


# -- RCV-SIGNATURE-ANY ---------------------------------------------------------------------------------------

@check("rotation-signatures", "RCV-SIGNATURE-ANY")
def rotation_signatures(s: Session) -> None:
    """Two `v1` signatures of which one verifies (a secret rotation) are answered 2xx, in either order."""
    for good_first in (False, True):
        event, stamp = s.factory.event("payout.completed"), int(time.time())
        body = encode(event)
        good = s.factory.signature(event["id"], str(stamp), body)
        stale = s.factory.signature(event["id"], str(stamp), body, other_secret())
        value = f"{good} {stale}" if good_first else f"{stale} {good}"
        s.accepted(s.factory.signed(event, timestamp=stamp, signature=value),
                   f"`whk-signature: {'<valid> <other secret>' if good_first else '<other secret> <valid>'}`")


@check("malformed-signature", "RCV-SIGNATURE-ANY")
def malformed_signature(s: Session) -> None:
    """A malformed `whk-signature` (no scheme, no comma, not base64) is not answered 2xx."""
    event, stamp = s.factory.event("payout.completed"), int(time.time())
    good = s.factory.signature(event["id"], str(stamp), encode(event))
    for value, what in ((_bare(good), "the base64 without `v1,`"), ("v1", "`v1` without a comma"),
                        ("v1,not*base64*at*all", "`v1,` followed by something that is not base64")):
        s.refused(s.factory.signed(s.factory.event("payout.completed"), signature=value),
                  f"`whk-signature` holding {what}")


@check("unknown-scheme-only", "RCV-SIGNATURE-ANY")
def unknown_scheme_only(s: Session) -> None:
    """Only an entry of an unknown scheme (`v2,` + the right HMAC) is not answered 2xx: no `v1` verifies."""
    event, stamp = s.factory.event("payout.completed"), int(time.time())
    good = s.factory.signature(event["id"], str(stamp), encode(event))
    s.refused(s.factory.signed(event, timestamp=stamp, signature="v2," + _bare(good)),
              "a `whk-signature` whose only entry is `v2,<the right HMAC>`")


# -- RCV-TIMESTAMP-WINDOW ------------------------------------------------------------------------------------

def _stamped(s: Session, offset: int):
    return s.factory.signed(s.factory.event("payout.completed"), timestamp=int(time.time()) + offset)


@check("timestamp-6-minutes-old", "RCV-TIMESTAMP-WINDOW")
def timestamp_old(s: Session) -> None:
    """A delivery signed six minutes ago is not answered 2xx."""
    s.refused(_stamped(s, -300 - TOLERANCE_MARGIN), "a delivery whose `whk-timestamp` is 6 minutes old")


@check("timestamp-6-minutes-ahead", "RCV-TIMESTAMP-WINDOW")
def timestamp_ahead(s: Session) -> None:
    """A delivery signed six minutes in the future is not answered 2xx."""
    s.refused(_stamped(s, 300 + TOLERANCE_MARGIN), "a delivery whose `whk-timestamp` is 6 minutes ahead")


@check("timestamp-4-minutes-old", "RCV-TIMESTAMP-WINDOW")
def timestamp_inside(s: Session) -> None:
    """A delivery signed four minutes ago is answered 2xx."""
    s.accepted(_stamped(s, -300 + TOLERANCE_MARGIN), "a delivery whose `whk-timestamp` is 4 minutes old")


# -- RCV-VERIFY-RAW --------------------------------------------------------------------------------------------

def _unusual_bytes(event: dict) -> bytes:
    """Valid JSON no serializer writes by default: indented, ASCII-escaped, `\\/` escapes, a final newline."""
    return (json.dumps(event, indent=3, ensure_ascii=True).replace("/", "\\/") + "\n").encode()


@check("reserialized-body", "RCV-VERIFY-RAW")
def reserialized_body(s: Session) -> None:
    """Verification is over the raw bytes: unusual bytes signed as sent are accepted; the same JSON
    re-serialized under the signature of the original bytes is not."""
    event = s.factory.event("payout.completed")
    event["data"]["reference"] = "payconform/raw-bytes \u00e9"
    s.accepted(s.factory.signed(event, body=_unusual_bytes(event)),
               "a delivery whose body bytes (indented, `\\u` and `\\/` escapes) are exactly the bytes signed")
    compact = ("compact", encode)
    default = ("Python's default", lambda e: json.dumps(e).encode())
    for (signed_name, signed_form), (sent_name, sent_form) in ((compact, default), (default, compact)):
        event = s.factory.event("payout.completed")
        s.refused(s.factory.signed(event, body=sent_form(event), signed_body=signed_form(event)),
                  f"the same JSON re-serialized ({sent_name} separators) under the signature of the "
                  f"original bytes ({signed_name} separators)")


# -- RCV-UNKNOWN-TYPES -------------------------------------------------------------------------------------------

@check("unknown-event-types", "RCV-UNKNOWN-TYPES")
def unknown_types(s: Session) -> None:
    """Event types the spec does not name (a new family, a new payout type) are answered 2xx."""
    for event_type in UNKNOWN_TYPES:
        data = s.factory.data("payout.pending") if event_type.startswith("payout.") else None
        s.accepted(s.factory.signed(s.factory.event(event_type, data)), f"a delivery of unknown type `{event_type}`")


# -- RCV-DEDUPE ---------------------------------------------------------------------------------------------------

@check("duplicate-acknowledged", "RCV-DEDUPE")
def duplicate_acknowledged(s: Session) -> None:
    """The same `whk-id` delivered twice (a retry, signed anew) is answered 2xx both times."""
    event = s.factory.event("payout.processing")
    s.accepted(s.factory.signed(event, timestamp=int(time.time()) - 60), "the first attempt of an event")
    s.accepted(s.factory.signed(event), "a retry of an event already received (same `whk-id`)")


@check("duplicate-applied-once", "RCV-DEDUPE", needs=("state_url",))
def duplicate_applied_once(s: Session) -> None:
    """A retried delivery is processed once: the receiver lists its `whk-id` once among the payout's events."""
    s.require_state()
    payout_id = s.factory.payout_id()
    pending = s.factory.signed(s.factory.event("payout.pending", payout_id=payout_id))
    completed_event = s.factory.event("payout.completed", payout_id=payout_id)
    completed = s.factory.signed(completed_event, timestamp=int(time.time()) - 60)
    for delivery in (pending, completed):
        s.accepted(delivery, f"`{delivery.event['type']}`")
        s.settled(payout_id, delivery)
    s.accepted(s.factory.signed(completed_event), "a retry of `payout.completed` (same `whk-id`)")
    state = s.after_grace(payout_id)
    if state.events is None:
        raise CheckSkipped("the --state-url answer has no `events` list: processings cannot be counted")
    count = state.events.count(completed.event_id)
    if count != 1:
        raise CheckFailed(f"expected: `{completed.event_id}` processed once\n"
                          f"seen: the receiver lists it {count} times for payout {payout_id}: {state.events}")


# -- RCV-NO-BACKWARDS ---------------------------------------------------------------------------------------------

@check("late-events-never-move-backwards", "RCV-NO-BACKWARDS", needs=("state_url",))
def never_backwards(s: Session) -> None:
    """`payout.completed`, then the late `payout.processing` and `payout.pending` (reordered by retries):
    the payout stays completed."""
    s.require_state()
    payout_id = s.factory.payout_id()
    pending_seq, processing_seq, completed_seq = (s.factory.sequence() for _ in range(3))
    for event_type, sequence in (("payout.completed", completed_seq), ("payout.processing", processing_seq),
                                 ("payout.pending", pending_seq)):
        delivery = s.factory.signed(s.factory.event(event_type, payout_id=payout_id, sequence=sequence))
        s.accepted(delivery, f"`{event_type}` (sequence {sequence})")
        state = s.settled(payout_id, delivery)
        if state.status != "completed":
            raise CheckFailed(f"expected: payout {payout_id} stays `completed` after a late `{event_type}`\n"
                              f"seen: the receiver holds `{state.status}`")


# -- RCV-RETURN-AFTER-COMPLETED ------------------------------------------------------------------------------------

@check("returned-after-completed", "RCV-RETURN-AFTER-COMPLETED", needs=("state_url",))
def returned_after_completed(s: Session) -> None:
    """`payout.returned` after `payout.completed` moves the payout to failed (the one forward move)."""
    s.require_state()
    payout_id = s.factory.payout_id()
    for event_type in ("payout.pending", "payout.completed", "payout.returned"):
        delivery = s.factory.signed(s.factory.event(event_type, payout_id=payout_id))
        s.accepted(delivery, f"`{event_type}`")
        state = s.settled(payout_id, delivery)
    if state.status != "failed":
        raise CheckFailed(f"expected: payout {payout_id} `failed` after `payout.returned` followed "
                          f"`payout.completed`\nseen: the receiver holds `{state.status}`")


# -- RCV-2XX-FIRST -------------------------------------------------------------------------------------------------

@check("answers-within-bound", "RCV-2XX-FIRST")
def answers_promptly(s: Session) -> None:
    """A valid delivery is answered 2xx within 5 seconds (answer first, work afterwards)."""
    exchange = s.accepted(s.factory.signed(s.factory.event("payout.completed")), "a valid delivery")
    if exchange.elapsed > ANSWER_BOUND_SECONDS:
        raise CheckFailed(f"expected: 2xx within {ANSWER_BOUND_SECONDS:g}s\n"
                          f"seen: answered after {exchange.elapsed:.2f}s")
