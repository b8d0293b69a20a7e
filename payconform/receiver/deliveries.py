"""Deliveries as the service sends them (Events): the envelope, the payload of each of the 22 types, the body
bytes and the four headers, signed with the Standard Webhooks scheme (`payconform.webhooks`).

Payloads are built from `contract/catalog/events.yaml`: `payout.*` carry the flat payout of Resources > Payout,
`payout_approval.*` an `approval` object with the catalog's `approval_fields`; then the row's `expect` values
and a value for each of its `present` fields. Shapes the spec does not show carry an `id` and those fields only,
so a receiver that passes does not depend on more than the spec promises.
"""

from __future__ import annotations

import copy
import json
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .. import webhooks
from ..contract import run_contract

# A value for each field a catalog row names in `present` (dotted under `data`); ids and instants are fresh.
PRESENT_VALUES: dict[str, Any] = {
    "failureCode": "account_invalid",
    "fundsReturned": True,
    "approval.error.type": "INSUFFICIENT_BALANCE",
    "counts": {"created": 1, "invalid": 0},
    "refund": "5.00",
    "refunded": "5.00",
}


def now_iso(at: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if at is None else at, timezone.utc)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def encode(event: dict) -> bytes:
    """Body bytes as a server sends them: compact JSON, UTF-8."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _put(target: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for name in parents:
        target = target.setdefault(name, {})
    if target.get(leaf) is None:
        target[leaf] = value


def _merge(target: dict, values: dict) -> None:
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


@dataclass(frozen=True)
class Delivery:
    """One attempt: the event, the exact body bytes, the headers to send (names as the spec spells them)."""

    event: dict
    body: bytes
    headers: list[tuple[str, str]]

    @property
    def event_id(self) -> str:
        return self.event["id"]


class Factory:
    """Events of one kit run: unique ids (a run token), increasing `sequence`, payloads from the catalog."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.catalog = run_contract().events
        self.types = {row["type"]: row for row in self.catalog["types"]}
        self.token = secrets.token_hex(4)
        self._count = 0
        self._sequence = int(time.time() * 1000)

    def _next(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}_pc{self.token}{self._count:04d}"

    def payout_id(self) -> str:
        return self._next("po")

    def data(self, event_type: str, payout_id: str | None = None) -> dict:
        """`data` for a catalog type (an unknown type gets a bare object with an id)."""
        row = self.types.get(event_type, {})
        schema = row.get("schema")
        if schema == "WebhookPayout":
            data: dict = self._payout(payout_id or self.payout_id())
        elif schema == "PayoutApproval":
            data = {"approval": self._approval()}
        else:
            data = {"id": self._next("obj")}
        _merge(data, row.get("expect") or {})
        for dotted in row.get("present") or ():
            _put(data, dotted, self._present(dotted, payout_id))
        return data

    def _present(self, dotted: str, payout_id: str | None) -> Any:
        if dotted.endswith("payoutId"):
            return payout_id or self.payout_id()
        if dotted == "completedAt":
            return now_iso()
        return PRESENT_VALUES[dotted]

    def _payout(self, payout_id: str) -> dict:
        return {"payoutId": payout_id, "status": "pending", "failureCode": None, "fundsReturned": None,
                "requiresFunding": False, "sourceCurrency": "USD", "sourceAmount": "100.00",
                "destinationCurrency": "EUR", "destinationAmount": "91.50", "destinationAccountId": self._next("acct"),
                "fee": {"currency": "USD", "amount": "1.00"}, "rate": "0.915", "reference": f"payconform-{self.token}",
                "endUser": None, "endUserId": None, "createdAt": now_iso(), "completedAt": None}

    def _approval(self) -> dict:
        values = {"id": self._next("apr"), "kind": "payout", "status": "pending", "requiredApprovals": 2,
                  "approvals": 0, "amount": "100.00", "currency": "USD", "destinationAccountId": self._next("acct"),
                  "createdAt": now_iso(), "expiresAt": now_iso(time.time() + 86400), "updatedAt": now_iso()}
        return {name: values[name] for name in self.catalog["approval_fields"]}

    def event(self, event_type: str, data: dict | None = None, *, payout_id: str | None = None,
              sequence: int | None = None) -> dict:
        """An envelope (Resources > Event envelope) with a fresh id; `sequence` defaults to the next one."""
        self._sequence += 1
        return {"id": self._next("evt"), "sequence": str(sequence if sequence is not None else self._sequence),
                "type": event_type, "createdAt": now_iso(), "apiVersion": self.catalog["api_version"],
                "livemode": False, "data": data if data is not None else self.data(event_type, payout_id)}

    def sequence(self) -> int:
        """Reserve the next `sequence` (to send events out of their order)."""
        self._sequence += 1
        return self._sequence

    def signed(self, event: dict, *, body: bytes | None = None, timestamp: int | None = None,
               signature: str | None = None, omit: str | None = None, signed_body: bytes | None = None,
               signed_id: str | None = None, secret: str | None = None) -> Delivery:
        """The delivery of `event` as `body` (default: its encoding), signed at `timestamp` (default: now).

        To forge: `signed_body` / `signed_id` / `secret` sign other content or with another secret,
        `signature` replaces the header value, `omit` leaves one header out."""
        raw = encode(event) if body is None else body
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        names = self.catalog["headers"]
        value = signature if signature is not None else self.signature(
            signed_id or event["id"], stamp, raw if signed_body is None else signed_body, secret)
        headers = [(names["id"], event["id"]), (names["timestamp"], stamp), (names["signature"], value),
                   (names["version"], str(event["apiVersion"])), ("content-type", "application/json")]
        return Delivery(event, raw, [(k, v) for k, v in headers if k != omit])

    def signature(self, event_id: str, timestamp: str, body: bytes, secret: str | None = None) -> str:
        """`v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>`."""
        return webhooks.expected_signature(secret or self.secret, event_id, timestamp, body)

    def header(self, name: str) -> str:
        """The wire name of a delivery header: `id`, `timestamp`, `signature` or `version`."""
        return self.catalog["headers"][name]
