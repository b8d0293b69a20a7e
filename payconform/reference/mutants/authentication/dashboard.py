"""Mutants of the Authentication part about the dashboard's actions (Mode A rule 6): an API key allowed one of
the webhook endpoint management routes that only a dashboard session may call.

Each replaces one route's refusal with the action the dashboard performs, so the key really changes the endpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.operation import Call, Reply
from ...core.validate import check
from ...events import webhook_endpoints as endpoints
from ..patching import Handler
from ..registry import mutant
from ..support.checkout import set_op

if TYPE_CHECKING:
    import sqlite3

    from ...reference import Reference


def _key_may(ref: Reference, op_id: str, action: Handler, *, takes_body: bool = False) -> None:
    """The route `op_id` runs `action` (reading the request's body if `takes_body`) for an API key instead of
    refusing it."""
    set_op(ref, op_id, handler=action, takes_body=takes_body)


def _endpoint(call: Call) -> sqlite3.Row:
    return endpoints.find_endpoint(call.ref, call.org_id, call.mode, call.params["endpointId"])


@mutant("api-key-replays-deliveries", reqs=["AUTH-KEY-CANNOT-PRIVILEGED"],
        doc="An API key may bulk-replay a webhook endpoint's deliveries (202) instead of being refused.")
def api_key_replays_deliveries(ref: Reference) -> None:
    _key_may(ref, "replayWebhookDeliveries", lambda call: Reply(202, {"requeued": 0}))


@mutant("api-key-registers-endpoints", reqs=["AUTH-KEY-CANNOT-PRIVILEGED"],
        doc="An API key may register a webhook endpoint on the management route (201) instead of being refused.")
def api_key_registers_endpoints(ref: Reference) -> None:
    def register(call: Call) -> Reply:
        url, events = endpoints.read_settings(check(call.json()))
        body = endpoints.create_endpoint(call.ref, call.org_id, call.mode, url, events)
        return Reply(201, body, body["id"])

    _key_may(ref, "createWebhookEndpoint", register, takes_body=True)


@mutant("api-key-pauses-endpoints", reqs=["AUTH-KEY-CANNOT-PRIVILEGED"],
        doc="An API key may pause or resume a webhook endpoint (200) instead of being refused.")
def api_key_pauses_endpoints(ref: Reference) -> None:
    def pause(call: Call) -> Reply:
        c = check(call.json())
        enabled = c.boolean("enabled", required=True)
        c.done()
        return Reply(200, endpoints.endpoint_json(endpoints.set_enabled(call.ref, _endpoint(call), bool(enabled))))

    _key_may(ref, "setWebhookEndpointEnabled", pause, takes_body=True)


@mutant("api-key-rotates-endpoint-secrets", reqs=["AUTH-KEY-CANNOT-PRIVILEGED"],
        doc="An API key may re-sign a webhook endpoint (200 with a new secret) instead of being refused.")
def api_key_rotates_endpoint_secrets(ref: Reference) -> None:
    _key_may(ref, "rotateWebhookEndpointSecret", lambda call: Reply(200, endpoints.rotate_secret(call.ref,
                                                                                                 _endpoint(call))))
