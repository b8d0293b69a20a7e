"""``Api``: the suites' HTTP client for a target.

- paths are relative to ``base_url``; ``{orgId}`` is filled with the client's organization;
- ``Api.op(op_id, ...)`` takes method, path and idempotency from the merged profile;
- ``idempotency_key=AUTO`` sends a fresh key (``pc-<uuid4 hex>``) where one is required or accepted;
- ``credential=AUTO`` sends the client's key in ``x-api-key``; ``None`` sends none;
- Mode B: a client whose credential is a signing key id (the target's ``signing_key_id``, or any key id
  with an explicit ``signer``) signs every request it sends under that key id, over the exact bytes and
  raw path that go out, unless the caller brought its own ``X-Svc-Signature`` / ``X-Svc-Request-Id``;
- every request is paced under the target's rate limit (``payconform.pacing``); a 429 is retried after
  ``Retry-After`` (at most 2 retries, at most 65 s each) unless the call says ``raw=True``;
- a live key never moves money and never writes to checkout (``SafetyError`` before sending), except one
  ``op(..., allow_live_refusal=True)`` of a sandbox-only operation that moves no money (a refusal the spec
  promises); no request leaves the target's host;
- a hang, a dropped connection, garbage or a body over 1 MiB is a ``TargetError`` (an AssertionError)
  whose message names what happened, the request line and the x-request-id;
- every exchange is appended, redacted and truncated, to the current test's transcript.
"""

from __future__ import annotations

import json as _json
import re
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Mapping
from urllib.parse import quote, urlsplit

import httpx

from . import contract as _contract
from . import pacing as _pacing
from . import redact as _redact
from . import results as _results
from . import signer as _signer
from .expect import failure_message

MAX_BODY = 1024 * 1024  # bytes read from an answer before giving up
TRANSCRIPT_BODY = 4096  # bytes of each body kept in the transcript
MAX_429_RETRIES = 2
MAX_RETRY_AFTER = 65.0
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MONEY_PATH_PARTS = ("/payouts", "/funding", "/refund", "/batches")
LIVE_PREFIXES = ("svc_live_", "akid_live_")  # a live API key or a live signing key id


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


class TargetError(AssertionError):
    """The target hung, dropped the connection, answered garbage or too much."""


class SafetyError(Exception):
    """The harness refused to send a request (live key on a money/checkout write, foreign host)."""


def new_idempotency_key() -> str:
    return f"pc-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class RequestInfo:
    method: str
    url: str
    headers: httpx.Headers
    content: bytes

    def __repr__(self) -> str:
        return f"RequestInfo({self.method} {_redact.redact(self.url)})"

    def __iter__(self):  # allows ``method, url = ex.request``
        return iter((self.method, self.url))

    @property
    def json(self) -> Any:
        return _json.loads(self.content) if self.content else None


class Exchange:
    """One request and its answer."""

    def __init__(self, request: RequestInfo, status: int, headers: httpx.Headers, content: bytes,
                 elapsed: float, op_id: str | None = None, attempts: int = 1) -> None:
        self.request = request
        self.status = status
        self.headers = headers
        self.content = content
        self.elapsed = elapsed
        self.op_id = op_id
        self.attempts = attempts
        self._json: Any = _NO_BODY

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    @property
    def json(self) -> Any:
        """The parsed body; a ``TargetError`` naming the requirement if it is not JSON."""
        if self._json is _NO_BODY:
            try:
                if not self.content:
                    raise ValueError("empty body")
                self._json = _json.loads(self.content)
            except (ValueError, UnicodeDecodeError) as exc:
                raise TargetError(
                    failure_message(
                        expected="a JSON body",
                        what=f"the body is not JSON ({exc.__class__.__name__}: {_short(str(exc), 120)})",
                        ex=self,
                        show_body=True,
                    )
                ) from None
        return self._json

    def __repr__(self) -> str:
        return f"Exchange({self.request.method} {_redact.redact(self.request.url)} -> {self.status}, x-request-id={self.request_id})"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _truncate(data: bytes) -> str:
    text = data[:TRANSCRIPT_BODY].decode("utf-8", errors="replace")
    if len(data) > TRANSCRIPT_BODY:
        text += f"... [truncated, {len(data)} bytes in all]"
    return text


def _target_signer(target: Any, credential: str | None) -> _signer.Signer | None:
    """The signer of the target's signing key when ``credential`` is its key id (Mode B), else None."""
    creds = getattr(target, "credentials", None) or {}
    key_id, private_key = creds.get("signing_key_id"), creds.get("signing_private_key")
    if credential is None or credential != key_id or not private_key:
        return None
    return _signer.Signer(key_id, private_key)


def _is_money_or_checkout_write(method: str, path: str, op: Mapping | None) -> bool:
    if op is not None and (op.get("money_write") or op.get("moves_money")):
        return True
    if method not in WRITE_METHODS:
        return False
    p = urlsplit(path).path if "://" in path else path.split("?", 1)[0]
    if "/checkout/" in p or p.startswith("checkout/") or p.rstrip("/").endswith("/checkout"):
        return True
    return any(part in p for part in MONEY_PATH_PARTS)


def _promised_live_refusal(op: Mapping | None) -> bool:
    """A sandbox-only operation that moves no money: the spec promises a live key 400 LIVE_MODE_UNSUPPORTED."""
    return (op is not None and bool(op.get("sandbox_only"))
            and not (op.get("money_write") or op.get("moves_money")))


class Api:
    """HTTP client bound to a target, a credential and an organization."""

    def __init__(
        self,
        target,
        credential: str | None = None,
        *,
        org_id: str | None = None,
        other_org_id: str | None = None,
        contract=None,
        pacer=None,
        redactor: _redact.Redactor | None = None,
        timeout: float | None = None,
        max_body: int = MAX_BODY,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        signer: _signer.Signer | None = None,
    ) -> None:
        self.target = target
        self.credential = credential
        self.signer = signer if signer is not None else _target_signer(target, credential)
        self.base_url = target.base_url.rstrip("/")
        self.org_id = org_id if org_id is not None else target.org_id
        self.other_org_id = other_org_id if other_org_id is not None else target.other_org_id
        self._contract = contract
        self._pacer = pacer
        self._redactor = redactor
        self.timeout = float(timeout if timeout is not None else getattr(target, "request_timeout", 10.0))
        self.max_body = max_body
        self._sleep = sleep
        self._host = urlsplit(self.base_url).netloc.lower()
        self._http = httpx.Client(
            timeout=httpx.Timeout(self.timeout),
            follow_redirects=False,
            transport=transport,
            trust_env=False,
            headers={"user-agent": "payconform"},
        )

    # -- plumbing -------------------------------------------------------------------------------

    @property
    def contract(self):
        return self._contract if self._contract is not None else _contract.current()

    @property
    def pacer(self):
        return self._pacer if self._pacer is not None else _pacing.current()

    @property
    def redactor(self) -> _redact.Redactor:
        return self._redactor if self._redactor is not None else _redact.default()

    def with_credential(self, credential: str | None, signer: _signer.Signer | None = None) -> "Api":
        """Another client for the same target and organization with ``credential`` (signing with ``signer``)."""
        return Api(self.target, credential, org_id=self.org_id, other_org_id=self.other_org_id,
                   contract=self._contract, pacer=self._pacer, redactor=self._redactor, timeout=self.timeout,
                   max_body=self.max_body, sleep=self._sleep, signer=signer)

    def close(self) -> None:
        self._http.close()

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
        path = path.replace("{orgId}", quote(str(self.org_id), safe="")) if self.org_id is not None else path
        return self._send(method.upper(), path, json=json, content=content, params=params, headers=headers,
                          idempotency_key=idempotency_key, credential=credential, raw=raw, timeout=timeout,
                          op_id=None, op=None)

    def get(self, path: str, **kw: Any) -> Exchange:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Exchange:
        return self.request("POST", path, **kw)

    def put(self, path: str, **kw: Any) -> Exchange:
        return self.request("PUT", path, **kw)

    def patch(self, path: str, **kw: Any) -> Exchange:
        return self.request("PATCH", path, **kw)

    def delete(self, path: str, **kw: Any) -> Exchange:
        return self.request("DELETE", path, **kw)

    def op(self, op_id: str, *, json: Any = _NO_BODY, content: bytes | str | None = None, params: Any = None,
           headers: Mapping[str, str] | None = None, idempotency_key: Any = AUTO, credential: Any = AUTO,
           raw: bool = False, timeout: float | None = None, allow_live_refusal: bool = False,
           **path_params: Any) -> Exchange:
        """Call a named operation; method, path and idempotency come from the merged profile.

        ``allow_live_refusal=True`` lets a live key through the guard for one call of an operation the profile
        marks ``sandbox_only`` and neither ``money_write`` nor ``moves_money``: a write the spec promises to
        refuse (400 ``LIVE_MODE_UNSUPPORTED``) and that cannot move money. Every other live write is refused.
        """
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
        if op.get("source") == "profile":
            rec = _results.current()
            if rec is not None:
                rec.use_op(op_id)
        return self._send(method, path, json=json, content=content, params=params, headers=headers,
                          idempotency_key=idempotency_key, credential=credential, raw=raw, timeout=timeout,
                          op_id=op_id, op=op, allow_live_refusal=allow_live_refusal)

    # -- internals ------------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            url = path
        elif not path:
            url = self.base_url
        else:
            url = self.base_url + "/" + path.lstrip("/")
        host = urlsplit(url).netloc.lower()
        if host != self._host:
            raise SafetyError(f"refusing to send a request to {host!r}: the target is {self._host!r}")
        return url

    def _send(self, method: str, path: str, *, json: Any, content: Any, params: Any, headers: Mapping | None,
              idempotency_key: Any, credential: Any, raw: bool, timeout: float | None, op_id: str | None,
              op: Mapping | None, allow_live_refusal: bool = False) -> Exchange:
        url = self._url(path)
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
            if "idempotency-key" not in user:
                if op is not None and op.get("idempotency") is not None:
                    wants = str(op.get("idempotency")).lower() in ("required", "optional")
                else:
                    wants = method in WRITE_METHODS
                if wants:
                    own["idempotency-key"] = new_idempotency_key()
        elif idempotency_key is not None:
            own["idempotency-key"] = str(idempotency_key)
        # headers the caller passed win over the ones the client adds
        pairs = [(k, v) for k, v in own.items() if k not in user] + list(user.multi_items())
        # non-ASCII values (tests of header grammars) go out as UTF-8 bytes instead of failing to encode
        hdrs = httpx.Headers([(k, v if v.isascii() else v.encode("utf-8")) for k, v in pairs])

        sent_key = hdrs.get("x-api-key")
        if (sent_key and sent_key.strip().startswith(LIVE_PREFIXES) and _is_money_or_checkout_write(method, url, op)
                and not (allow_live_refusal and _promised_live_refusal(op))):
            raise SafetyError(
                f"refusing to send {method} {self.redactor.redact(url)} with a live key: "
                "a live key never moves money or writes to checkout"
            )

        attempts = 0
        while True:
            attempts += 1
            self.pacer.acquire(sent_key, method, url)
            ex = self._attempt(method, url, hdrs, body, params, timeout, op_id, attempts)
            if ex.status != 429 or raw or attempts > MAX_429_RETRIES:
                return ex
            self._sleep(self._retry_after(ex))

    @staticmethod
    def _retry_after(ex: Exchange) -> float:
        value = ex.headers.get("retry-after")
        try:
            seconds = float(value) if value is not None else 1.0
        except ValueError:
            seconds = 1.0
        return min(max(seconds, 0.0), MAX_RETRY_AFTER)

    def _attempt(self, method: str, url: str, headers: httpx.Headers, body: bytes, params: Any,
                 timeout: float | None, op_id: str | None, attempt: int) -> Exchange:
        limit = float(timeout) if timeout is not None else self.timeout
        request = self._http.build_request(method, url, content=body or None, params=params, headers=headers,
                                           timeout=httpx.Timeout(limit))
        self._sign(request, body)
        info = RequestInfo(method, str(request.url), request.headers, body)
        started = time.monotonic()
        wall = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        deadline = started + limit + 5.0
        status: int | None = None
        resp_headers = httpx.Headers()
        buf = bytearray()
        error: str | None = None
        try:
            resp = self._http.send(request, stream=True)
            try:
                status, resp_headers = resp.status_code, resp.headers
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_body:
                    error = (f"the answer declares {int(declared)} bytes (content-length), more than the "
                             f"{self.max_body}-byte limit; the harness did not read it")
                else:
                    for chunk in resp.iter_bytes():
                        buf += chunk
                        if len(buf) > self.max_body:
                            error = (f"the answer is larger than {self.max_body} bytes; "
                                     "the harness stopped reading")
                            break
                        if time.monotonic() > deadline:
                            error = f"the answer did not finish within {limit + 5:g}s"
                            break
            finally:
                resp.close()
        except httpx.TimeoutException as exc:
            error = f"no answer within {limit:g}s ({exc.__class__.__name__})"
        except httpx.ConnectError as exc:
            error = f"could not connect to the target ({_short(str(exc) or exc.__class__.__name__, 200)})"
        except httpx.RemoteProtocolError as exc:
            error = ("the target dropped the connection or answered something that is not HTTP "
                     f"({_short(str(exc) or exc.__class__.__name__, 200)})")
        except httpx.TransportError as exc:
            error = f"transport error ({exc.__class__.__name__}: {_short(str(exc), 200)})"
        elapsed = time.monotonic() - started
        request_id = resp_headers.get("x-request-id") if status is not None else None
        self._record(wall, info, status, resp_headers, bytes(buf), request_id, elapsed, error, op_id, attempt)
        if error is not None:
            raise TargetError(
                failure_message(what=f"target error: {error}", request=(method, info.url), request_id=request_id)
            )
        return Exchange(info, status, resp_headers, bytes(buf), elapsed, op_id=op_id, attempts=attempt)

    def _sign(self, request: httpx.Request, body: bytes) -> None:
        """Mode B: add the signature headers for exactly what is about to be sent (each attempt signs anew,
        with a fresh nonce, so a 429 retry is not a replay)."""
        h = request.headers
        if (self.signer is None or h.get("x-api-key") != self.signer.key_id
                or "x-svc-signature" in h or "x-svc-request-id" in h):
            return
        h.update(self.signer.headers(request.method, request.url.raw_path.decode("ascii"), body,
                                     h.get("idempotency-key")))

    def _record(self, wall: str, info: RequestInfo, status: int | None, headers: httpx.Headers, body: bytes,
                request_id: str | None, elapsed: float, error: str | None, op_id: str | None, attempt: int) -> None:
        rec = _results.current()
        if rec is None:
            return
        r = self.redactor
        entry = {
            "time": wall,
            "op": op_id,
            "attempt": attempt,
            "method": info.method,
            "url": r.redact(info.url),
            "request_headers": r.headers(info.headers),
            "request_body": r.redact(_truncate(info.content)) if info.content else "",
            "status": status,
            "response_headers": r.headers(headers) if status is not None else {},
            "response_body": r.redact(_truncate(body)) if body else "",
            "request_id": request_id,
            "elapsed": round(elapsed, 4),
        }
        if error:
            entry["error"] = r.redact(error)
        rec.add_exchange(entry)
