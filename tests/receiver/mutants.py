"""Mutants of the example receiver: each breaks one rule, and names the requirement whose check must kill it."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from datetime import datetime, timezone

from starlette.responses import Response

from .conftest import example

Receiver = example.Receiver
MUTANTS: dict[str, tuple[str, type]] = {}


def mutant(name: str, requirement: str) -> Callable[[type], type]:
    def register(cls: type) -> type:
        MUTANTS[name] = (requirement, cls)
        return cls
    return register


@mutant("verifies-reserialized-body", "RCV-VERIFY-RAW")
class VerifiesReserialized(Receiver):
    def verify(self, raw: bytes, headers: Mapping[str, str]) -> dict:
        return super().verify(json.dumps(json.loads(raw)).encode(), headers)


@mutant("ignores-timestamp", "RCV-TIMESTAMP-WINDOW")
class IgnoresTimestamp(Receiver):
    def verify(self, raw: bytes, headers: Mapping[str, str]) -> dict:
        try:
            stamp = datetime.fromtimestamp(int(headers["whk-timestamp"]), timezone.utc)
            wanted, entries = self.webhook.sign(headers["whk-id"], stamp, raw.decode()), headers["whk-signature"]
        except (KeyError, ValueError):
            raise example.Rejected("missing or malformed headers") from None
        if not any(hmac.compare_digest(wanted, entry) for entry in entries.split(" ")):
            raise example.Rejected("no signature matches")
        return json.loads(raw)


@mutant("checks-first-signature-only", "RCV-SIGNATURE-ANY")
class FirstSignatureOnly(Receiver):
    def verify(self, raw: bytes, headers: Mapping[str, str]) -> dict:
        first = dict(headers, **{"whk-signature": headers.get("whk-signature", "").split(" ")[0]})
        return super().verify(raw, first)


@mutant("fails-on-unknown-types", "RCV-UNKNOWN-TYPES")
class FailsOnUnknownTypes(Receiver):
    def unknown_type(self, event: dict) -> Response:
        return Response("unknown event type", status_code=400)


@mutant("applies-duplicates", "RCV-DEDUPE")
class AppliesDuplicates(Receiver):
    def first_delivery(self, event_id: str) -> bool:
        return True


@mutant("moves-backwards", "RCV-NO-BACKWARDS")
class MovesBackwards(Receiver):
    @staticmethod
    def moves(current: str | None, event_type: str) -> bool:
        return True
