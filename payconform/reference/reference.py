"""The Reference object: one running reference server, its configuration, storage and components.

Mutants and variants (``payconform/reference/mutants/``) change behaviour by patching attributes of one
Reference *instance*, never module globals. The patch points:

- ``ref.choices`` - what this deployment chose where the spec does not show (``choices.py``): read, never
  patched; the parts it concerns were built from it.
- ``ref.operations[op_id]`` - the Operation per operation id (handler, idempotency mode, scopes,
  audit action, ...); replace one with ``dataclasses.replace`` or use ``ref.wrap_handler(op_id, wrap)``.
  The routing table is built once, but each call looks its Operation up here.
- ``ref.auth`` - ``authenticate(request) -> Principal`` (401s), ``authorize(principal, org_id, op)``
  (403s, in order: wrong organization, suspended, live key before verification, scope, checkout payments
  gate, live key on a sandbox route), ``find_key(raw) -> KeyRecord | None``, ``issue(...)``, and the
  issuing rules ``write_only_scopes``, ``default_expiry_years``, ``max_expiry_years``.
- ``ref.signing`` - Mode B (signed requests, ``signing.py``): ``applies(request)``, ``authenticate(request)``,
  ``skew``, ``fresh``, ``signed_path``, ``string_to_sign``, ``verify``, ``check_signed``, ``spend_nonce``,
  ``key_material``, ``new_key_id``, ``set_expiry``; ``ref.challenges`` - the challenge flow
  (``challenges.py``): ``lifetime``, ``binds``, ``issue``, ``redeem``.
- ``ref.rotation`` - key rotation for API and signing keys (``rotation.py``): ``overlap``, ``check``,
  ``deadline``.
- ``ref.ratelimit`` - ``per_key_limit``, ``per_ip_limit``, ``window_seconds``, ``check_ip``, ``check_key``.
- ``ref.idempotency`` - ``key_pattern``, ``lookup(scope, key)``, ``fingerprint(method, path, body)``,
  ``releases(err) -> bool``, ``retention``, ``duplicate_window``, ``run(call, execute)``.
- ``ref.faults`` - ``before_handler(org_id, op_id)``.
- ``ref.clock`` - ``wall()`` and ``now(org_id)``.
- ``ref.checkout`` - checkout rules (``checkout.py``): sandbox delays, the cap on simulated payments, when a
  sent link expires (``expiry_due``), the public page, the card processor, the forced-outcome guards and the
  in-flight checks of publish and refund.
- ``ref.lifecycle`` - the sandbox payout lifecycle (``lifecycle.py``): ``timelines`` (scenario -> steps),
  ``settle(call, row)``, ``record(...)``.
- ``ref.pricing`` - quotes and the network's sandbox refusals (``pricing.py``): ``lifetime``, ``fee``,
  ``minimum``, ``single_limit``, ``capabilities``, ``price``, ``check_network``, ``issue``, ``verify``, ``expired``.
- ``ref.payout_links`` - hosted payout links (``payout_links.py``): ``token``, ``verify``, ``find``,
  ``authenticate`` (the submit route's bearer), ``not_found``, ``configured``, ``unconfigured_feature``,
  ``expired``, ``lifetime``, ``unknown_account_tail``, ``spend``, ``fail``.
- ``ref.approvals`` - payout approvals (``approvals.py``): ``default_threshold``, ``lifetime``,
  ``required_approvals``, ``policy``, ``applies``, ``hold``, ``find``, ``decide``.
- ``ref.batches`` - payout batches (``batches.py``): ``validating_after``, ``validated_after``,
  ``confirmable``, ``cancelable``, ``events``, ``enabled``, ``duplicate_of``, ``needs_approval``,
  ``check_line``, ``counts``, ``settle``, ``run``, ``cancel``, ``approval_pending``.
- ``ref.events`` - the event store (``events.py``): ``record(org_id, mode, type, data, now)``, ``envelope``,
  ``feed``, ``active``, ``replayable``, ``requeue``, ``resume``; ``ref.dispatcher`` - webhook deliveries
  (``dispatcher.py``): ``ladder``, ``jitter``, ``timeout``, ``connect_timeout``, ``concurrency``, ``timestamp``,
  ``signed_content``, ``headers``, ``secrets_for``, ``disable_unhealthy``, ``announce``, and the hooks
  ``after_attempt`` and ``end_of_run``, which may send more with ``request(delivery)``.
- ``ref.audit`` - ``record(...)``.
- ``ref.new_org_id() -> str`` - the id of an organization the operator creates (CUID-shaped).
- ``ref.render_error(err, request_id) -> dict`` - the error body.
- ``ref.error_response(request, err) -> Response`` - every error answer (API, unknown routes, operator).
- ``ref.respond(request, status, body, headers, is_error=...) -> Response`` - every API and operator answer
  as bytes; wrap it to change the encoding of the bytes (the response filters see the body before it).
- ``ref.route_not_found(method, path) -> ApiError`` - the answer for an unknown route or method.
- ``ref.response_filters`` - callables ``f(out: Outgoing) -> None`` applied, in order, to every API
  response (success and error, 404s included; operator routes excluded) just before it is serialized;
  they may change ``out.status``, ``out.body`` and ``out.headers`` (``x-request-id``, ``Retry-After``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .choices import DEFAULT, Choices
from .core import ids
from .resources.approvals import Approvals
from .core.audit import AuditLog
from .authentication.auth import Auth
from .resources.batches import Batches
from .authentication.challenges import Challenges
from .states.checkout import CheckoutRules
from .core.clock import Clock
from .events.dispatcher import Dispatcher
from .core.errors import ApiError, error_body
from .events.events import Events
from .core.faults import Faults
from .conventions.idempotency import Idempotency
from .states.lifecycle import Lifecycle
from .core.operation import API_PREFIX, Call, Operation, Reply
from .conventions.paging import Cursors
from .resources.payout_links import PayoutLinks
from .resources.pricing import Pricing
from .limits.ratelimit import RateLimiter
from .core.requestid import request_id_of
from .core.responses import Outgoing, to_response
from .authentication.rotation import Rotation
from .routes import all_operations
from .authentication.signing import Signing
from .core.store import Store

OPERATOR_PREFIX = "/_operator"

Handler = Callable[[Call], Reply]


@dataclass(frozen=True)
class Config:
    operator_token: str
    db_path: str = ":memory:"
    choices: Choices = DEFAULT  # what this deployment chose where the spec does not show (`choices.py`)


def place_operations(operations: list[Operation], choices: Choices) -> dict[str, Operation]:
    """The operations by id, each at the method and path the choices give it (its route module's otherwise)."""
    placed = {}
    for op in operations:
        route = choices.routes.get(op.op_id)
        placed[op.op_id] = op if route is None else dataclasses.replace(op, method=route.method, path=route.path)
    return placed


class Reference:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.choices = config.choices
        self.store = Store(config.db_path)
        self.clock = Clock(self.store)
        self.auth = Auth(self.store, self.clock)
        self.challenges = Challenges(self.store)
        self.signing = Signing(self.store, self.clock, self.challenges)
        self.rotation = Rotation()
        self.ratelimit = RateLimiter(self.clock)
        self.faults = Faults()
        self.idempotency = Idempotency(self.store, self.faults)
        self.audit = AuditLog(self.store, self.clock)
        self.lifecycle = Lifecycle(config.choices.timeline, config.choices.select_by)
        self.approvals = Approvals(config.choices.approval_threshold)
        self.pricing = Pricing(config.choices.select_by, config.choices.corridor_key)
        self.batches = Batches()
        self.events = Events(self.store)
        self.approvals.events = self.events
        self.dispatcher = Dispatcher(self)
        self.cursors = Cursors()
        self.payout_links = PayoutLinks(self.store, self.clock, self.ratelimit)
        self.checkout = CheckoutRules()
        self.operations: dict[str, Operation] = place_operations(all_operations(), config.choices)
        self.response_filters: list[Callable[[Outgoing], None]] = []
        self.new_org_id: Callable[[], str] = ids.org_id

    def wrap_handler(self, op_id: str, wrap: Callable[[Handler], Handler]) -> None:
        """Replace one operation's handler by `wrap(old_handler)`."""
        op = self.operations[op_id]
        self.operations[op_id] = dataclasses.replace(op, handler=wrap(op.handler))

    def render_error(self, err: ApiError, request_id: str) -> dict[str, Any]:
        return error_body(err, request_id)

    def route_not_found(self, method: str, path: str) -> ApiError:
        return ApiError(
            "ROUTE_NOT_FOUND",
            f"No route matches {method} {path}; payouts are sent to /payouts and read from /orders.",
        )

    def respond(self, request: Request, status: int, body: Any, headers: dict[str, str] | None = None,
                *, is_error: bool = False) -> Response:
        """Every response leaves through here: `x-request-id`, JSON, and the filters (API routes only)."""
        rid = request_id_of(request)
        out = Outgoing(status, body, {"x-request-id": rid, **(headers or {})}, is_error, rid)
        if not request.url.path.startswith(OPERATOR_PREFIX):
            for response_filter in self.response_filters:
                response_filter(out)
        return to_response(out)

    def error_response(self, request: Request, err: ApiError) -> Response:
        body = self.render_error(err, request_id_of(request))
        return self.respond(request, err.status, body, err.headers, is_error=True)

    def close(self) -> None:
        self.store.close()
