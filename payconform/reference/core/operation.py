"""What a route is (Operation), what a handler receives (Call) and what it returns (Reply).

Handlers are plain synchronous functions `handler(call) -> Reply` that raise ApiError to refuse. Every
cross-cutting rule (authentication, rate limit, scopes, idempotency, faults, audit) is applied around
them by `pipeline.py`, driven by the Operation's declarative fields.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from starlette.datastructures import Headers, QueryParams
from starlette.requests import Request

from .errors import validation_error
from .query import Query
from .store import Store

API_PREFIX = "/business/api/v1"  # every API route is served under it

if TYPE_CHECKING:
    from ..authentication.auth import Principal

ServerT = TypeVar("ServerT")


class StoreServer(Protocol):
    """The server as code that only reads and writes rows sees it."""

    store: Store


WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    resource_id: str | None = None  # the id the audit row and the duplicate guard name
    replayed: bool = False


@dataclass(frozen=True)
class Operation:
    """One route of the API, relative to the `/business/api/v1` prefix.

    idempotency: "required" | "optional" | "none" (Endpoints rule 3).
    money_write: the 15-minute duplicate-body guard applies.
    takes_body: False for routes whose body is ignored (and left out of the idempotency fingerprint).
    scopes: scopes needed on top of `read` (reads) or `write` (writes).
    sandbox_only: a live key gets 400 LIVE_MODE_UNSUPPORTED.
    payments_gate: Endpoints rule 2 (403 until the organization may accept payments); every checkout
      route except refund.
    audit: the audit action recorded for each call, e.g. "recipient.create".
    bearer: for a route that takes no credential because a bearer token in its path authorizes it (the hosted
      payout link): `bearer(server, request)` resolves the token to the principal it acts for, or refuses.
    """

    op_id: str
    method: str
    path: str
    handler: Callable[[Call[Any]], Reply]
    idempotency: Literal["required", "optional", "none"] = "none"
    money_write: bool = False
    takes_body: bool = False
    scopes: tuple[str, ...] = ()
    sandbox_only: bool = False
    payments_gate: bool | None = None
    audit: str | None = None
    bearer: Callable[[Any, Request], Principal] | None = None

    def __post_init__(self) -> None:
        if self.payments_gate is None:
            object.__setattr__(self, "payments_gate", self.path.startswith("/checkout/"))

    @property
    def is_write(self) -> bool:
        return self.method in WRITE_METHODS


_UNPARSED = object()


@dataclass
class Call(Generic[ServerT]):
    """One authenticated, authorized request as a handler sees it.

    `ref` is the whole server the request runs in; a module states what it reaches through it with a
    Protocol (`Call[PayoutServer]`), so that no domain module depends on the server's assembly.
    """

    ref: ServerT
    op: Operation
    request_id: str
    principal: Principal
    org_id: str
    path: str
    params: dict[str, str]
    query_params: QueryParams
    headers: Headers
    raw_body: bytes
    now: datetime
    _json: Any = field(default=_UNPARSED, repr=False)

    @property
    def mode(self) -> str:
        return self.principal.mode

    @property
    def query(self) -> Query:
        return Query(self.query_params)

    def json(self) -> Any:
        """The parsed body. Malformed JSON (including NaN/Infinity) or an empty body is a 400."""
        if self._json is _UNPARSED:
            self._json = parse_json(self.raw_body)
        return self._json

    def replace_json(self, value: Any) -> None:
        """Make `value` the parsed body the handler reads: mutants and variants rewrite a request this way."""
        self._json = value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(raw: bytes) -> Any:
    if not raw.strip():
        raise validation_error([{"field": "body", "reason": "required"}], "A JSON body is required.")
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
        # A "\ud800" escape decodes to a lone surrogate, which is not text: storing it would fail later (a 500).
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except (ValueError, UnicodeError, RecursionError):
        raise validation_error([{"field": "body", "reason": "malformed JSON"}], "The body is not valid JSON.") from None
