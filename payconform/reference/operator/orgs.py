"""Operator actions on organizations: create one, change its flags and features, advance its clock."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..core.clock import iso
from ..core.errors import ApiError
from ..core.orgs import FLAGS, create_org, get_org, update_org
from ..core.validate import Checker
from .endpoint import OperatorRoute, org_of

if TYPE_CHECKING:
    from .server import OperatorServer

DEFAULT_FEATURES = ["developer", "mass_payouts"]
MAX_ADVANCE_SECONDS = 10 * 365 * 86400


def _flags(c: Checker) -> tuple[dict[str, bool], list[str] | None]:
    flags = {name: value for name in FLAGS if (value := c.boolean(name)) is not None}
    features = c.obj.get("features")
    if features is not None and not (isinstance(features, list) and all(isinstance(f, str) for f in features)):
        c.fail("features", "must be a list of strings")
        features = None
    return flags, features


def create_organization(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    c = Checker(body)
    flags, features = _flags(c)
    c.done()
    defaults = {"verified": True, "payments_enabled": True, "suspended": False}
    org = create_org(ref.store, {**defaults, **flags}, DEFAULT_FEATURES if features is None else features,
                     ref.clock.wall(), ref.new_org_id)
    return 201, org.to_json()


def update_organization(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = org_of(ref, request)
    c = Checker(body)
    flags, features = _flags(c)
    c.done()
    update_org(ref.store, org_id, flags, features)
    org = get_org(ref.store, org_id)
    assert org is not None
    return 200, org.to_json()


def advance_clock(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{advance_seconds}`: the organization's clock moves forward (waiting hours without waiting)."""
    org_id = org_of(ref, request)
    seconds = body.get("advance_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_ADVANCE_SECONDS:
        raise ApiError("VALIDATION_ERROR", errors=[{"field": "advance_seconds", "reason": "a number of seconds >= 0"}])
    return 200, {"now": iso(ref.clock.advance(org_id, float(seconds)))}


ROUTES = [
    OperatorRoute("/orgs", create_organization, "POST"),
    OperatorRoute("/orgs/{orgId}", update_organization, "PATCH"),
    OperatorRoute("/orgs/{orgId}/clock", advance_clock, "POST", dispatch=True),
]
