"""Mutants of Endpoints rule 3 and the idempotency error rows: which routes need a key, the key grammar,
in-flight and unavailable keys, kept keys, retention, and the duplicate-body guard."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Awaitable, Callable

from starlette.datastructures import Headers

from ..clock import iso
from ..errors import ApiError
from ..idempotency import canonical_body
from ..operation import Call, Reply
from ..responses import Outgoing
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference

Execute = Callable[[], Awaitable[Reply]]


def _set_idempotency(ref: Reference, old: str, new: str, only: str | None = None) -> None:
    for op_id, op in list(ref.operations.items()):
        if op.idempotency == old and only in (None, op_id):
            ref.operations[op_id] = dataclasses.replace(op, idempotency=new)


def _drop_field(ref: Reference, error_type: str, field: str) -> None:
    def drop(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == error_type:
            out.body.pop(field, None)

    ref.response_filters.append(drop)


# -- which routes need a key ---------------------------------------------------------------------------


@mutant("idem-key-required-nowhere", reqs=["IDEM-REQUIRED", "IDEM-REQUIRED-ROUTES", "ERR-IDEMPOTENCY-KEY-REQUIRED"],
        doc="No route requires an Idempotency-Key: a keyed write without one runs instead of 400 "
            "IDEMPOTENCY_KEY_REQUIRED.")
def _(ref: Reference) -> None:
    _set_idempotency(ref, "required", "optional")


@mutant("idem-key-not-required-on-add-method", reqs=["IDEM-REQUIRED-ROUTES"],
        doc="Add-payment-method runs without an Idempotency-Key.")
def _(ref: Reference) -> None:
    _set_idempotency(ref, "required", "optional", only="addBeneficiaryMethod")


@mutant("idem-key-required-on-optional-routes", reqs=["IDEM-OPTIONAL-ROUTES"],
        doc="Recipient PATCH and DELETE refuse a request without a key (400 IDEMPOTENCY_KEY_REQUIRED).")
def _(ref: Reference) -> None:
    _set_idempotency(ref, "optional", "required")


@mutant("idem-key-ignored-on-optional-routes", reqs=["IDEM-OPTIONAL-ROUTES"],
        doc="Recipient PATCH and DELETE ignore an Idempotency-Key: a repeat under the same key runs again.")
def _(ref: Reference) -> None:
    _set_idempotency(ref, "optional", "none")


@mutant("idem-keyless-requests-deduplicated", reqs=["IDEM-OPTIONAL-ROUTES"],
        doc="On optional routes a request without a key is keyed by its own fingerprint, so an identical "
            "repeat replays instead of running again.")
def _(ref: Reference) -> None:
    run = ref.idempotency.run

    async def implicit_key(call: Call, execute: Execute) -> Reply:
        if call.op.idempotency == "optional" and "idempotency-key" not in call.headers:
            key = "implicit-" + ref.idempotency.fingerprint(call.op.method, call.path, canonical_body(call.raw_body))
            call.headers = Headers(raw=[*call.headers.raw, (b"idempotency-key", key[:255].encode())])
        return await run(call, execute)

    ref.idempotency.run = implicit_key  # type: ignore[method-assign]


# -- the key grammar -----------------------------------------------------------------------------------


@mutant("idem-empty-key-treated-as-missing",
        reqs=["IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID", "LIMIT-IDEM-KEY-LENGTH"],
        doc="An empty Idempotency-Key counts as no key, and the keyed write runs without one.")
def _(ref: Reference) -> None:
    parse = ref.idempotency.parse_key
    ref.idempotency.parse_key = lambda value, mode: None if value == "" else parse(value, mode)  # type: ignore[method-assign]


@mutant("idem-key-charset-unchecked", reqs=["IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID"],
        doc="Any 1-255 characters are accepted as a key (spaces, `/`, non-ASCII).")
def _(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^.{1,255}$", re.DOTALL)


@mutant("idem-key-charset-too-narrow", reqs=["IDEM-CHARSET"],
        doc="Keys with `.` or `:` are refused as IDEMPOTENCY_KEY_INVALID.")
def _(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^[A-Za-z0-9_-]{1,255}$")


@mutant("idem-key-length-bounds-shifted", reqs=["IDEM-CHARSET", "LIMIT-IDEM-KEY-LENGTH"],
        doc="Keys of 1 or 255 characters are refused (2-254 accepted).")
def _(ref: Reference) -> None:
    ref.idempotency.key_pattern = re.compile(r"^[A-Za-z0-9_.:-]{2,254}$")


# -- keys seen before ----------------------------------------------------------------------------------


@mutant("idem-conflict-generic-type", reqs=["ERR-IDEMPOTENCY-KEY-CONFLICT"],
        doc="The same key with another body answers 409 CONFLICT instead of IDEMPOTENCY_KEY_CONFLICT.")
def _(ref: Reference) -> None:
    def generic(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == "IDEMPOTENCY_KEY_CONFLICT":
            out.body["type"] = "CONFLICT"

    ref.response_filters.append(generic)


@mutant("idem-in-progress-undetected", reqs=["IDEM-IN-PROGRESS", "ERR-IDEMPOTENCY-KEY-REQUEST-IN-PROGRESS"],
        doc="An identical request sent while the first still runs runs too.")
def _(ref: Reference) -> None:
    _hide_running(ref)


def _hide_running(ref: Reference) -> None:
    """The key store answers as if a key whose first request still runs were not there."""
    lookup = ref.idempotency.lookup

    def settled_only(scope: tuple[str, str], key: str):
        record = lookup(scope, key)
        return None if record is not None and record["state"] == "running" else record

    ref.idempotency.lookup = settled_only  # type: ignore[method-assign]


@mutant("idem-in-progress-undetected-side-by-side",
        reqs=["IDEM-IN-PROGRESS", "ERR-IDEMPOTENCY-KEY-REQUEST-IN-PROGRESS"],
        doc="As idem-in-progress-undetected, on a server that runs requests side by side (each payout yields "
            "for a moment once its key is claimed): identical payouts sent at once pay more than once.")
def _(ref: Reference) -> None:
    before_handler = ref.faults.before_handler

    async def side_by_side(org_id: str, operation: str) -> None:
        if operation == "createPayout":
            await asyncio.sleep(SIDE_BY_SIDE_SECONDS)
        await before_handler(org_id, operation)

    _hide_running(ref)
    ref.faults.before_handler = side_by_side  # type: ignore[method-assign]


SIDE_BY_SIDE_SECONDS = 0.3


@mutant("idem-unavailable-executes", reqs=["IDEM-UNAVAILABLE", "ERR-IDEMPOTENCY-UNAVAILABLE"],
        doc="When the key cannot be recorded the request runs anyway, then answers 503 IDEMPOTENCY_UNAVAILABLE.")
def _(ref: Reference) -> None:
    run = ref.idempotency.run

    async def run_then_refuse(call: Call, execute: Execute) -> Reply:
        if call.op.idempotency != "none" and ref.faults.take(call.org_id, call.op.op_id, "idempotency_unavailable"):
            await execute()
            raise ApiError("IDEMPOTENCY_UNAVAILABLE")
        return await run(call, execute)

    ref.idempotency.run = run_then_refuse  # type: ignore[method-assign]


@mutant("outcome-unknown-releases-key", reqs=["IDEM-OUTCOME-UNKNOWN", "ERR-PAYOUT-OUTCOME-UNKNOWN"],
        doc="PAYOUT_OUTCOME_UNKNOWN releases the key like any error: the replay pays.")
def _(ref: Reference) -> None:
    ref.idempotency.releases = lambda err: True  # type: ignore[method-assign]


@mutant("idem-expired-key-reexecutes", reqs=["IDEM-RETENTION"],
        doc="A key older than the 7-day retention is forgotten and the request runs again.")
def _(ref: Reference) -> None:
    lookup = ref.idempotency.lookup

    def unexpired(scope: tuple[str, str], key: str):
        record = lookup(scope, key)
        horizon = iso(ref.clock.now(scope[0]) - ref.idempotency.retention)
        return None if record is not None and record["created_at"] <= horizon else record

    ref.idempotency.lookup = unexpired  # type: ignore[method-assign]


# -- the duplicate-body guard --------------------------------------------------------------------------


@mutant("dup-guard-off", reqs=["DUP-DETECTED", "ERR-DUPLICATE-REQUEST-DETECTED"],
        doc="No duplicate-body guard: an identical payout under another key pays again.")
def _(ref: Reference) -> None:
    ref.idempotency.duplicate_window = timedelta(0)


@mutant("dup-guard-without-original-key", reqs=["ERRBODY-ORIGINAL-KEY", "DUP-ORIGINAL-KEY"],
        doc="DUPLICATE_REQUEST_DETECTED does not name the originalIdempotencyKey.")
def _(ref: Reference) -> None:
    _drop_field(ref, "DUPLICATE_REQUEST_DETECTED", "originalIdempotencyKey")


@mutant("dup-guard-without-original-payout", reqs=["DUP-ORIGINAL-PAYOUT"],
        doc="DUPLICATE_REQUEST_DETECTED does not name the originalPayoutId of a first request that paid.")
def _(ref: Reference) -> None:
    _drop_field(ref, "DUPLICATE_REQUEST_DETECTED", "originalPayoutId")


@mutant("dup-original-key-executes-again", reqs=["DUP-ORIGINAL-KEY"],
        doc="Money writes are never replayed: resending the original key pays again.")
def _(ref: Reference) -> None:
    lookup = ref.idempotency.lookup

    def no_money_replay(scope: tuple[str, str], key: str):
        record = lookup(scope, key)
        return None if record is not None and ref.operations[record["op_id"]].money_write else record

    ref.idempotency.lookup = no_money_replay  # type: ignore[method-assign]


@mutant("allow-duplicate-any-value", reqs=["DUP-ALLOW-ONLY-TRUE"],
        doc="Any X-Allow-Duplicate value (yes, TRUE, 1) bypasses the guard.")
def _(ref: Reference) -> None:
    ref.idempotency.allow_duplicate = lambda call: "x-allow-duplicate" in call.headers  # type: ignore[method-assign]


@mutant("allow-duplicate-true-ignored", reqs=["DUP-ALLOW-HEADER"],
        doc="X-Allow-Duplicate: true does not bypass the guard: a deliberate duplicate is refused.")
def _(ref: Reference) -> None:
    ref.idempotency.allow_duplicate = lambda call: False  # type: ignore[method-assign]


@mutant("dup-window-1-minute", reqs=["DUP-WINDOW"],
        doc="The duplicate-body guard lasts one minute instead of 15.")
def _(ref: Reference) -> None:
    ref.idempotency.duplicate_window = timedelta(minutes=1)


@mutant("dup-window-never-ends", reqs=["DUP-WINDOW"],
        doc="The duplicate-body guard never ends: the identical body is refused long after 15 minutes.")
def _(ref: Reference) -> None:
    ref.idempotency.duplicate_window = timedelta(days=3650)
