"""Patches of authentication, authorization, rate limiting and recipients' reads that the mutants of
several parts share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Awaitable, Iterator

from ...authentication.auth import KeyRecord, Principal, _record
from ...core.errors import ApiError
from ...core.operation import Call, Reply
from ...core.responses import Outgoing
from ..patching import Authenticate

if TYPE_CHECKING:
    from ...core.operation import Operation
    from ...reference import Reference
    from starlette.requests import Request


Authorize = Callable[[Principal, str, "Operation"], None]


def key_row(ref: Reference, public_id: str) -> KeyRecord | None:
    row = ref.store.one("SELECT * FROM api_keys WHERE public_id = ?", (public_id,))
    return _record(row) if row is not None else None


def on_auth_error(ref: Reference, handle: Callable[[Request, ApiError], Principal]) -> None:
    """`authenticate` answers `handle(request, err)` instead of raising `err`."""
    original: Authenticate = ref.auth.authenticate

    def authenticate(request: Request) -> Principal:
        try:
            return original(request)
        except ApiError as err:
            return handle(request, err)

    ref.auth.authenticate = authenticate  # type: ignore[method-assign]


def on_authz_error(ref: Reference, handle: Callable[[Principal, str, Operation, ApiError], None]) -> None:
    """`authorize` calls `handle(principal, org_id, op, err)` instead of raising `err`."""
    original: Authorize = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        try:
            original(principal, org_id, op)
        except ApiError as err:
            handle(principal, org_id, op, err)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


Execute = Callable[[], Awaitable[Reply]]


def on_429(ref: Reference, change: Callable[[Outgoing], None]) -> None:
    def apply(out: Outgoing) -> None:
        if out.status == 429:
            change(out)

    ref.response_filters.append(apply)


def read_recipient(ref: Reference, call: Call) -> Reply:
    return ref.operations["getBeneficiary"].handler(call)


def objects(value: Any) -> Iterator[dict]:
    """Every JSON object inside ``value``, outermost first."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from objects(item)
