"""Shared steps of the events suite: the event catalog, registering a mailbox, reading the feed, and the
checks every delivery must pass (Events > Delivery headers, Event envelope).

A delivery is waited for by polling the mailbox; where the target has an operator clock, each poll first
moves the organization's clock by zero seconds, which makes the reference's dispatcher run at once (a
target without a clock is simply polled for up to `DISPATCH_WAIT` seconds: "a delivery lands within about
15 seconds").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import yaml

from payconform import paths
from payconform.client import Api
from payconform.contract import Contract
from payconform.expect import expect, expect_status, fail
from payconform.webhooks import Delivery, Mailbox, SignatureError, verify

from ..endpoints.factories import success
from ..endpoints.test_payouts import _problems as payout_problems

DISPATCH_WAIT = 25.0
INSTANT_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$")
Flush = Callable[[], Any] | None


@cache
def catalog() -> dict[str, Any]:
    with open(paths.contract_dir() / "catalog" / "events.yaml", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def event_types() -> set[str]:
    return {t["type"] for t in catalog()["types"]}


def opt_in_types() -> list[str]:
    """The event types an endpoint receives only when it lists them in `events` (checkout payments)."""
    return [t["type"] for t in catalog()["types"] if t["opt_in"]]


def row_of(type_: str) -> dict[str, Any]:
    return next(t for t in catalog()["types"] if t["type"] == type_)


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


def feed(api: Api, **params: str) -> list[dict[str, Any]]:
    """Every event of the feed matching `params`, following `since=<last sequence>` (the profile's paging)."""
    rows: list[dict[str, Any]] = []
    query = dict(params)
    for _ in range(50):
        ex = api.op("listEvents", params=query)
        expect_status(ex, 200, "reading the event feed")
        page = ex.json.get("data") if isinstance(ex.json, dict) else None
        expect(isinstance(page, list), "the feed answered no `data` list (the profile's envelope)", ex)
        rows += page
        if not page:
            return rows
        query["since"] = str(page[-1].get("sequence"))
    return rows


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
    try:
        body = json.loads(delivery.body)
    except ValueError:
        return None
    return body.get("type") if isinstance(body, dict) else None


def wait_for(box: Mailbox, predicate: Callable[[list[Delivery]], bool], flush: Flush, what: str,
             timeout: float = DISPATCH_WAIT) -> list[Delivery]:
    seen = box.wait_for(predicate, timeout, flush=flush)
    expect(predicate(seen), f"{what}: not delivered within {timeout:g} s ({len(seen)} deliveries arrived)")
    return seen


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
    expect(created_utc(body.get("createdAt")), f"`createdAt` is {body.get('createdAt')!r}, not ISO 8601 UTC")
    return body


def data_problems(row: dict[str, Any], data: Any, payout_states: list[str]) -> list[str]:
    """How an event's `data` falls short of its catalog row: the resource the spec shows (the flat
    `WebhookPayout`, or the `approval` object), the values the row expects and the fields it names."""
    if not isinstance(data, dict):
        return [f"`data` is {type(data).__name__}, not an object"]
    problems: list[str] = []
    if row.get("schema") == "WebhookPayout":
        # A returned payload keeps `completedAt` (Resources > Payout), although its status reads `failed`.
        problems += [p for p in payout_problems(data, data, payout_states)
                     if not (row["type"] == "payout.returned" and p.startswith("`completedAt`"))]
    if row.get("schema") == "PayoutApproval":
        approval = data.get("approval")
        missing = [f for f in catalog()["approval_fields"] if not isinstance(approval, dict) or f not in approval]
        problems += [f"`data.approval` lacks {missing}"] if missing else []
    if row.get("expect") and not contains(data, row["expect"]):
        problems.append(f"`data` does not carry {row['expect']}")
    problems += [f"`data` has no `{path}`" for path in row.get("present") or () if _at(data, path) is None]
    return problems


def _at(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def walk_problems(types: list[str], moves: list[list[str | None]]) -> list[str]:
    """Where a sequence of event types (feed order) leaves the machine's `event_moves` (None: the first)."""
    allowed = {tuple(m) for m in moves}
    pairs = zip([None, *types], types)
    return [f"{before or '(first)'} -> {after}" for before, after in pairs if (before, after) not in allowed]


def _headers(delivery: Delivery) -> dict[str, str]:
    names = ("whk-id", "whk-timestamp", "whk-signature", "Svc-Webhook-Version")
    return {n: (delivery.header(n) or "(absent)")[:60] for n in names}


def by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r.get("id"): r for r in rows if isinstance(r, dict)}


def created_utc(value: Any) -> bool:
    return isinstance(value, str) and INSTANT_UTC.match(value) is not None


def contains(whole: Any, part: Any) -> bool:
    """Whether `whole` carries everything `part` does (extra fields in objects tolerated, recursively)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and contains(whole[k], v) for k, v in part.items())
    if isinstance(part, list):
        return isinstance(whole, list) and len(whole) == len(part) and all(map(contains, whole, part))
    return type(whole) is type(part) and whole == part
