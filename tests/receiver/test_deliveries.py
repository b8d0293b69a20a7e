"""Deliveries as the kit builds them: signed as the spec says (cross-checked with `standardwebhooks`), shaped as
the contract describes (the OpenAPI `webhooks` entry of each of the 22 types), forgeries that do not verify."""

from __future__ import annotations

import json

import jsonschema
import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from payconform import webhooks
from payconform.contract import run_contract
from payconform.receiver.checks import other_secret
from payconform.receiver.deliveries import Delivery, Factory

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  # the Standard Webhooks published vector
TYPES = [row["type"] for row in run_contract().events["types"]]
RENAME = {"whk-id": "webhook-id", "whk-timestamp": "webhook-timestamp", "whk-signature": "webhook-signature"}


def _library_verifies(delivery: Delivery, secret: str = SECRET) -> bool:
    headers = {RENAME[k]: v for k, v in delivery.headers if k in RENAME}
    try:
        Webhook(secret).verify(delivery.body, headers)
    except (WebhookVerificationError, ValueError):
        return False
    return True


def test_signature_matches_the_published_vector() -> None:
    assert Factory(SECRET).signature("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", b'{"test": 2432232314}') == \
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


@pytest.mark.parametrize("event_type", TYPES)
def test_each_type_is_signed_and_shaped_as_the_contract_says(event_type: str) -> None:
    factory = Factory(SECRET)
    delivery = factory.signed(factory.event(event_type))
    assert _library_verifies(delivery)
    headers = dict(delivery.headers)
    assert webhooks.verify(SECRET, headers["whk-id"], headers["whk-timestamp"], headers["whk-signature"],
                           delivery.body)
    body = json.loads(delivery.body)
    assert body["id"] == headers["whk-id"] and str(body["apiVersion"]) == headers["Svc-Webhook-Version"]
    doc = run_contract().openapi("payouts")
    schema = doc["webhooks"][event_type]["post"]["requestBody"]["content"]["application/json"]["schema"]
    jsonschema.validate(body, dict(schema, components=doc["components"]))


def test_forgeries_do_not_verify() -> None:
    factory = Factory(SECRET)
    event = factory.event("payout.completed")
    forged = [factory.signed(event, secret=other_secret()), factory.signed(event, signed_body=b"{}"),
              factory.signed(event, signed_id="evt_other"),
              factory.signed(event, omit="whk-signature")]
    assert [_library_verifies(d) for d in forged] == [False] * len(forged)


def test_ids_are_unique_and_sequences_increase() -> None:
    factory = Factory(SECRET)
    events = [factory.event(t) for t in TYPES]
    assert len({e["id"] for e in events}) == len(events)
    assert [int(e["sequence"]) for e in events] == sorted(int(e["sequence"]) for e in events)
