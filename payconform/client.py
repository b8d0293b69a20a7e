"""``Api``: the suites' HTTP client for a target, over the one transport (``payconform.transport.sender``).

- paths are relative to ``base_url``; ``{orgId}`` is filled with the client's organization;
- ``Api.op(op_id, ...)`` takes method, path and idempotency from the merged profile; an operation whose path
  comes from the profile (the spec does not show it) that the target does not serve (404 ``ROUTE_NOT_FOUND``,
  405) raises ``ProfileMismatch`` naming the profile entry, unless the call says ``route_mismatch=False``;
- ``Api.op`` sends a JSON body's fields under the names the operation's ``body_fields`` gives them (the
  deployment's own names, ``payconform.profile.bodies``);
- ``idempotency_key=AUTO`` sends a fresh key (``pc-<uuid4 hex>``) where one is required or accepted;
- ``credential=AUTO`` sends the client's key in ``x-api-key``; ``None`` sends none;
- Mode B: a client whose credential is a signing key id (the target's ``signing_key_id``, or any key id
  with an explicit ``signer``) signs every request it sends under that key id, over the exact bytes and
  raw path that go out, unless the caller brought its own ``X-Svc-Signature`` / ``X-Svc-Request-Id``;
- the transport paces, guards live keys (``op(..., allow_live_refusal=True)`` is the one narrow exception),
  keeps to the target's host, applies the total deadline and the body cap, retries a 429 (unless
  ``raw=True``) and records the transcript.
"""

from __future__ import annotations

import json as _json
import re
import time
from typing import Any, Callable, Mapping
from urllib.parse import quote

import httpx

from . import contract as _contract
from . import redact as _redact
from .profile import bodies as _bodies
from .results import records as _results
from .results.mismatch import ProfileMismatch
from . import signer as _signer
from .transport.sender import MAX_429_RETRIES, MAX_BODY, Exchange, RequestInfo, SafetyError, TargetError, Transport, new_idempotency_key
from .context import RunContext
from .transport.guard import WRITE_METHODS

__all__ = ["AUTO", "Api", "Exchange", "RequestInfo", "SafetyError", "TargetError", "new_idempotency_key"]


class _Auto:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "AUTO"

    def __reduce__(self):
        return (_Auto, ())


AUTO: Any = _Auto()
_NO_BODY: Any = object()


def _target_signer(target: Any, credential: str | None) -> _signer.Signer | None:
    """The signer of the target's signing key when ``credential`` is its key id (Mode B), else None."""
    creds = getattr(target, "credentials", None) or {}
    key_id, private_key = creds.get("signing_key_id"), creds.get("signing_private_key")
    if credential is None or credential != key_id or not private_key:
        return None
    return _signer.Signer(key_id, private_key)


class Api:
    """HTTP client bound to a target, a credential and an organization."""

    def __init__(
        self,
        target,
        credential: str | None = None,
        *,
        org_id: str | None = None,
        other_org_id: str | None = None,
        run: RunContext | None = None,
        contract=None,
        timeout: float | None = None,
        max_body: int = MAX_BODY,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        signer: _signer.Signer | None = None,
    ) -> None:
        self.target = target
        self.credential = credential
        self.signer = signer if signer is not None else _target_signer(target, credential)
        self.org_id = org_id if org_id is not None else target.org_id
        self.other_org_id = other_org_id if other_org_id is not None else target.other_org_id
        self._contract = contract
        self._sleep = sleep
        self.transport = Transport(target, run=run, timeout=timeout, max_body=max_body, sleep=sleep, http=transport)
        self.base_url = self.transport.base_url
        self.timeout = self.transport.timeout
        self.max_body = max_body

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def run(self) -> RunContext:
        """The run this client sends through (a ``payconform.context.RunContext``; in a run, the process's ``Run``): urgent reads, timeout credit, observers."""
        return self.transport.run

    @property
    def contract(self):
        if self._contract is not None:
            return self._contract
        return self.run.contract if self.run.contract is not None else _contract.current()

    @property
    def pacer(self):
        return self.transport.pacer

    @property
    def redactor(self) -> _redact.Redactor:
        return self.transport.redactor

    def with_credential(self, credential: str | None, signer: _signer.Signer | None = None) -> "Api":
        """Another client for the same target and organization with ``credential`` (signing with ``signer``)."""
        return Api(self.target, credential, org_id=self.org_id, other_org_id=self.other_org_id,
                   run=self.run, contract=self._contract, timeout=self.timeout,
                   max_body=self.max_body, sleep=self._sleep, signer=signer)

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> "Api":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        cred = self.redactor.redact(self.credential) if self.credential else None
        return f"Api({self.base_url}, org={self.org_id}, credential={cred})"

    # -- public API -----------------------------------------------------------------------------

    def request(self, method: str, path: str, *, json: Any = _NO_BODY, content: bytes | str | None = None,
                params: Any = None, headers: Mapping[str, str] | None = None, idempotency_key: Any = AUTO,
                credential: Any = AUTO, raw: bool = False, timeout: float | None = None) -> Exchange:
        """Send ``method path`` (relative to base_url; ``{orgId}`` filled in) and return the exchange."""
        __tracebackhide__ = True  # its arguments hold credentials: a traceback shows the caller's line
        path = path.replace("{orgId}", quote(str(self.org_id), safe="")) if self.org_id is not None else path
        return self._send(method.upper(), path, json=json, content=content, params=params, headers=headers,
                          idempotency_key=idempotency_key, credential=credential, raw=raw, timeout=timeout,
                          op_id=None, op=None)

    def get(self, path: str, **kw: Any) -> Exchange:
        __tracebackhide__ = True
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Exchange:
        __tracebackhide__ = True
        return self.request("POST", path, **kw)

    def put(self, path: str, **kw: Any) -> Exchange:
        __tracebackhide__ = True
        return self.request("PUT", path, **kw)

    def patch(self, path: str, **kw: Any) -> Exchange:
        __tracebackhide__ = True
        return self.request("PATCH", path, **kw)

    def delete(self, path: str, **kw: Any) -> Exchange:
        __tracebackhide__ = True
        return self.request("DELETE", path, **kw)

    def op(self, op_id: str, *, json: Any = _NO_BODY, content: bytes | str | None = None, params: Any = None,
           headers: Mapping[str, str] | None = None, idempotency_key: Any = AUTO, credential: Any = AUTO,
           raw: bool = False, timeout: float | None = None, allow_live_refusal: bool = False,
           route_mismatch: bool = True, **path_params: Any) -> Exchange:
        """Call a named operation; method, path and idempotency come from the merged profile.

        An operation the profile places (``source: profile``: the spec names it but shows no path) answered
        404 ``ROUTE_NOT_FOUND`` or 405 is a route this deployment placed elsewhere: ``ProfileMismatch`` naming
        ``operations.<op_id>.path`` (``.method`` for 405). ``route_mismatch=False`` returns that answer instead,
        for a caller that judges it. A route the spec shows stays the caller's to judge: its 404 is a failure.

        ``allow_live_refusal=True`` lets a live key through the guard for one call of an operation the profile
        marks ``sandbox_only`` and neither ``money_write`` nor ``moves_money``: a write the spec promises to
        refuse (400 ``LIVE_MODE_UNSUPPORTED``) and that cannot move money. Every other live write is refused.
        """
        __tracebackhide__ = True
        contract = self.contract
        if contract is None:
            raise LookupError(f"operation {op_id!r}: no contract loaded (contract/profile.default.yaml)")
        op = contract.operation(op_id)
        method = str(op.get("method", "GET")).upper()
        template = str(op.get("path") or "")
        names = re.findall(r"\{(\w+)\}", template)
        values = dict(path_params)
        if "orgId" in names and "orgId" not in values:
            values["orgId"] = self.org_id
        missing = [n for n in names if values.get(n) is None]
        if missing:
            raise TypeError(f"operation {op_id} ({method} {template}) needs path parameter(s): {', '.join(missing)}")
        extra = sorted(set(path_params) - set(names))
        if extra:
            raise TypeError(f"operation {op_id} ({method} {template}) has no path parameter(s): {', '.join(extra)}")
        path = re.sub(r"\{(\w+)\}", lambda m: quote(str(values[m.group(1)]), safe=""), template)
        if json is not _NO_BODY and op.get("body_fields"):
            json = _bodies.rename(json, op["body_fields"])  # the deployment's names for the profile body's fields
        placed = op.get("source") == "profile"
        if placed:
            rec = _results.current()
            if rec is not None:
                rec.use_op(op_id)
        ex = self._send(method, path, json=json, content=content, params=params, headers=headers,
                        idempotency_key=idempotency_key, credential=credential, raw=raw, timeout=timeout,
                        op_id=op_id, op=op, allow_live_refusal=allow_live_refusal)
        missing = _missing_route(ex) if placed and route_mismatch else None
        if missing is not None:
            field = "method" if ex.status == 405 else "path"
            raise ProfileMismatch(f"operations.{op_id}.{field}", f"the target has no route {method} {template} "
                                  f"({missing})", expected=f"{method} {template}", exchange=ex)
        return ex

    # -- internals ------------------------------------------------------------------------------

    def _send(self, method: str, path: str, *, json: Any, content: Any, params: Any, headers: Mapping | None,
              idempotency_key: Any, credential: Any, raw: bool, timeout: float | None, op_id: str | None,
              op: Mapping | None, allow_live_refusal: bool = False) -> Exchange:
        __tracebackhide__ = True
        own: dict[str, str] = {}
        body: bytes = b""
        if json is not _NO_BODY:
            body = _json.dumps(json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            own["content-type"] = "application/json"
        elif content is not None:
            body = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        if credential is AUTO:
            # operations the profile marks `auth: none` (hosted payout link pages) carry no credential
            key = None if (op is not None and str(op.get("auth", "")).lower() == "none") else self.credential
        else:
            key = credential
        if key is not None:
            own["x-api-key"] = str(key)
        user = httpx.Headers(headers or {})
        if idempotency_key is AUTO:
            if "idempotency-key" not in user and self._wants_idempotency_key(method, op):
                own["idempotency-key"] = new_idempotency_key()
        elif idempotency_key is not None:
            own["idempotency-key"] = str(idempotency_key)
        # headers the caller passed win over the ones the client adds
        pairs = [(k, v) for k, v in own.items() if k not in user] + list(user.multi_items())
        return self.transport.send(method, path, headers=pairs, content=body, params=params, timeout=timeout,
                                   op=op, op_id=op_id, retries=0 if raw else MAX_429_RETRIES,
                                   allow_live_refusal=allow_live_refusal, signer=self.signer)

    @staticmethod
    def _wants_idempotency_key(method: str, op: Mapping | None) -> bool:
        if op is not None and op.get("idempotency") is not None:
            return str(op.get("idempotency")).lower() in ("required", "optional")
        return method in WRITE_METHODS


def _missing_route(ex: Exchange) -> str | None:
    """``404 ROUTE_NOT_FOUND`` or ``405`` when the answer says the target has no such route or method, else None."""
    if ex.status == 405:
        return "405"
    if ex.status != 404:
        return None
    try:
        body = _json.loads(ex.content)
    except (ValueError, UnicodeDecodeError):
        return None
    return "404 ROUTE_NOT_FOUND" if isinstance(body, dict) and body.get("type") == "ROUTE_NOT_FOUND" else None
