"""Mutants of authentication and authorization (indistinguishable 401s, wrong organization)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ApiError
from . import mutant

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..auth import Principal
    from ..operation import Operation
    from ..reference import Reference


@mutant("revoked-key-distinct-type", reqs=["AUTH-REVOKED-KEY", "AUTH-INDISTINGUISHABLE"],
        doc="A revoked key answers 401 KEY_REVOKED instead of the same UNAUTHORIZED as an unknown key.")
def _(ref: Reference) -> None:
    original = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        key = ref.auth.find_key(request.headers.get("x-api-key"))
        if key is not None and key.revoked:
            raise ApiError("KEY_REVOKED", "This API key was revoked.", status=401)
        return original(request)

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


@mutant("malformed-key-distinct-detail", reqs=["AUTH-INDISTINGUISHABLE"],
        doc="A malformed key answers UNAUTHORIZED with a detail that differs from an unknown key's.")
def _(ref: Reference) -> None:
    original = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            raw = request.headers.get("x-api-key")
            if err.type == "UNAUTHORIZED" and raw is not None and not raw.startswith(("svc_test_", "svc_live_")):
                err.detail = "The API key is malformed."
            raise

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


@mutant("wrong-org-404", reqs=["AUTH-WRONG-ORG-FORBIDDEN"],
        doc="A key used on another organization's path answers 404 NOT_FOUND instead of 403 FORBIDDEN.")
def _(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        if principal.org_id != org_id:
            raise ApiError("NOT_FOUND", "No such organization.")
        original(principal, org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]
