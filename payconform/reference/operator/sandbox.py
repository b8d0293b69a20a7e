"""Operator actions that make the outside world misbehave: injected faults and card-holder disputes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..resources import refunds
from ..resources.funding import NETWORK as PAYOUT_NETWORK
from ..resources.batches import RUN as BATCH_RUN
from ..resources.payouts import ORDERS_NETWORK
from ..resources.recipients import ACCOUNT_PROVIDER
from ..resources.refunds import REFUND_PROCESSOR
from ..states.checkout import PSEUDO_OPERATIONS
from ..core.errors import ERRORS, ApiError
from ..core.faults import KINDS, Fault
from ..core.orgs import get_org
from ..core.validate import Checker
from .endpoint import OperatorRoute, org_of

if TYPE_CHECKING:
    from .server import OperatorServer


def add_fault(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """A fault (`error`, `delay`, `timeout`, ...) on the next `count` calls of an operation or pseudo-operation."""
    c = Checker(body)
    org_id = c.string("org_id", required=True)
    pseudo = (*PSEUDO_OPERATIONS, BATCH_RUN, PAYOUT_NETWORK, ORDERS_NETWORK, ACCOUNT_PROVIDER, REFUND_PROCESSOR)
    operation = c.string("operation", required=True, choices=(*ref.operations, *pseudo))
    kind = c.string("kind", required=True, choices=KINDS)
    count = c.integer("count", low=1, high=1000)
    seconds = body.get("seconds", 0)
    valid_seconds = isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and 0 < seconds <= 60
    if kind == "delay" and not valid_seconds:
        c.fail("seconds", "a delay of 0-60 seconds")
    status = c.integer("status", low=400, high=599)
    error_type = c.string("type", required=kind == "error", max_len=64)
    if error_type is not None and error_type not in ERRORS and status is None:
        c.fail("status", "required for an error type the spec does not list")
    c.done()
    if org_id is not None and get_org(ref.store, org_id) is None:
        raise ApiError("NOT_FOUND", "No such organization.")
    fault = ref.faults.add(Fault("", org_id or "", operation or "", kind or "", count or 1, float(seconds),
                                 status, error_type))
    return 201, {"id": fault.id, "org_id": fault.org_id, "operation": fault.operation, "kind": fault.kind,
                 "count": fault.remaining}


def open_dispute(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """The card holder disputes a checkout payment (refunds then answer REFUND_DISPUTED)."""
    answer = refunds.open_dispute(ref, org_of(ref, request), request.path_params["paymentId"])
    if answer is None:
        raise ApiError("NOT_FOUND", "No such payment in this organization.")
    return 200, answer


ROUTES = [
    OperatorRoute("/faults", add_fault, "POST"),
    OperatorRoute("/orgs/{orgId}/checkout/payments/{paymentId}/dispute", open_dispute, "POST"),
]
