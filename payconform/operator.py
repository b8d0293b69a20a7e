"""The operator adapter: privileged actions an API key cannot do (the dashboard, the back office, time).

``Operator`` is the protocol; ``HttpOperator`` speaks the reference server's operator API
(``{host}/_operator``, header ``x-operator-token``); ``load_operator(target)`` builds the adapter the
target file names (``adapter: reference | "package.module:Class" | none``). A custom class is
constructed with the ``operator`` mapping of the target file; a method it lacks raises
``NotImplementedError`` (the plugin turns that into a skip "needs operator: cannot <method>").
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable, Protocol, runtime_checkable

import httpx

from .pacing import accounting as _accounting
from . import redact as _redact
from .transport.http import DeadlineTransport

OPERATIONS = ("create_org", "update_org", "issue_key", "revoke_key", "advance_clock", "inject_fault",
              "register_signing_key", "rotate_key", "rotate_signing_key", "register_webhook_endpoint",
              "set_webhook_endpoint_enabled", "rotate_webhook_secret", "replay_webhook_delivery",
              "replay_webhook_deliveries", "delete_webhook_endpoint", "open_dispute",
              "approve_payout", "reject_payout", "set_approval_policy", "seed_orders", "seed_webhook_deliveries",
              "create_deposit", "complete_deposit", "record_untracked_movement", "place_hold",
              "set_balance_source_readable", "set_history_loaded", "set_wallet")
DEFAULT_FEATURES = ("developer", "mass_payouts")


class OperatorError(RuntimeError):
    """The operator refused or failed an action."""

    def __init__(self, message: str, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@runtime_checkable
class Operator(Protocol):
    capabilities: set[str]

    def create_org(self, *, verified: bool = True, payments_enabled: bool = True, suspended: bool = False,
                   features: Iterable[str] = DEFAULT_FEATURES) -> str: ...

    def update_org(self, org_id: str, **fields: Any) -> dict: ...

    def issue_key(self, org_id: str, *, mode: str = "test", scopes: Iterable[str] = ("read", "write"),
                  expires_at: str | None = None, expires_in_days: int | None = None,
                  pinned_ips: Iterable[str] | None = None) -> dict: ...

    def revoke_key(self, org_id: str, key_id: str) -> None: ...

    def advance_clock(self, org_id: str, seconds: float) -> Any: ...

    def inject_fault(self, org_id: str, operation: str, kind: str, *, seconds: float | None = None,
                     status: int | None = None, type: str | None = None, count: int = 1) -> None: ...

    def register_signing_key(self, org_id: str, *, mode: str = "test", scopes: Iterable[str] = ("read", "write"),
                             public_key_pem: str | None = None, stamp_key: str | None = None,
                             expires_at: str | None = None, expires_in_days: int | None = None,
                             pinned_ips: Iterable[str] | None = None) -> dict:
        """Register a Mode B key (a P-256 SPKI PEM public key or a stamp key); answers ``{id: key id, ...}``."""
        ...

    def rotate_key(self, org_id: str, key_id: str) -> dict:
        """Rotate an API key (by the ``id`` ``issue_key`` answered): the successor ``{id, key, ...,
        previousValidUntil}``; the predecessor works until that deadline."""
        ...

    def rotate_signing_key(self, org_id: str, key_id: str, *, public_key_pem: str) -> dict:
        """Rotate a signing key to the holder's new public key: the successor ``{id, ..., previousValidUntil}``."""
        ...

    def seed_orders(self, org_id: str, count: int) -> None:
        """The organization holds ``count`` orders besides its payouts (balance history's size limit)."""
        ...

    def seed_webhook_deliveries(self, org_id: str, endpoint_id: str, count: int) -> None:
        """The endpoint's newest delivery gains ``count`` copies (a long delivery history: bulk replay's limit)."""
        ...


def _key_body(mode: str, scopes: Iterable[str], expires_at: str | None, expires_in_days: int | None,
              pinned_ips: Iterable[str] | None) -> dict[str, Any]:
    """The issuing rules API keys and signing keys share, as the reference's operator API takes them."""
    body: dict[str, Any] = {"mode": mode, "scopes": list(scopes)}
    if expires_at is not None:
        body["expires_at"] = expires_at
    if expires_in_days is not None:
        body["expires_in_days"] = expires_in_days
    if pinned_ips is not None:
        body["pinned_ips"] = list(pinned_ips)
    return body


# Seconds an operator call may take. Advancing the clock also runs the deliveries that fall due (each up to the
# dispatcher's 5 s), so on a loaded machine one call can take far longer than an API request.
OPERATOR_TIMEOUT = 60.0


class HttpOperator:
    """The reference server's operator API over HTTP."""

    capabilities: set[str] = set(OPERATIONS)

    def __init__(self, url: str, token: str, *, timeout: float = OPERATOR_TIMEOUT, transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.capabilities = set(OPERATIONS)
        _redact.default().add(token)
        # The suite's transport: its pool drops an idle connection before the server's keep-alive closes it, so a
        # call after a pause (a pacing sleep, a real-time wait) never races that close.
        self._http = httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False,
                                  transport=transport or DeadlineTransport(),
                                  headers={"x-operator-token": token, "user-agent": "payconform-operator"})

    def close(self) -> None:
        self._http.close()

    def __repr__(self) -> str:
        return f"HttpOperator({self.url})"

    def _call(self, method: str, path: str, body: Any = None, expect: Iterable[int] = (200, 201, 204)) -> Any:
        url = self.url + path
        _accounting.operator_call()
        try:
            resp = self._http.request(method, url, json=body)
        except httpx.HTTPError as exc:
            raise OperatorError(f"operator {method} {url}: {exc.__class__.__name__}: {exc}") from None
        try:
            data = resp.json() if resp.content else None
        except ValueError:
            data = None
        if resp.status_code not in set(expect):
            detail = data if data is not None else resp.text[:500]
            raise OperatorError(
                _redact.redact(f"operator {method} {url} -> {resp.status_code}: {detail} "
                               f"(x-request-id: {resp.headers.get('x-request-id')})"),
                status=resp.status_code,
                body=data,
            )
        return data

    def health(self) -> bool:
        try:
            return httpx.get(self.url + "/health", timeout=3, trust_env=False).status_code == 200
        except httpx.HTTPError:
            return False

    def create_org(self, *, verified: bool = True, payments_enabled: bool = True, suspended: bool = False,
                   features: Iterable[str] = DEFAULT_FEATURES) -> str:
        data = self._call("POST", "/orgs", {"verified": verified, "payments_enabled": payments_enabled,
                                            "suspended": suspended, "features": list(features)})
        org_id = (data or {}).get("orgId") or (data or {}).get("org_id") or (data or {}).get("id")
        if not org_id:
            raise OperatorError(f"operator POST /orgs answered no orgId: {data}")
        return str(org_id)

    def update_org(self, org_id: str, **fields: Any) -> dict:
        if "features" in fields and fields["features"] is not None:
            fields["features"] = list(fields["features"])
        return self._call("PATCH", f"/orgs/{org_id}", fields) or {}

    def issue_key(self, org_id: str, *, mode: str = "test", scopes: Iterable[str] = ("read", "write"),
                  expires_at: str | None = None, expires_in_days: int | None = None,
                  pinned_ips: Iterable[str] | None = None) -> dict:
        body = _key_body(mode, scopes, expires_at, expires_in_days, pinned_ips)
        data = self._call("POST", f"/orgs/{org_id}/keys", body) or {}
        if data.get("key"):
            _redact.default().add(data["key"])
        return data

    def revoke_key(self, org_id: str, key_id: str) -> None:
        self._call("POST", f"/orgs/{org_id}/keys/{key_id}/revoke")

    def register_signing_key(self, org_id: str, *, mode: str = "test", scopes: Iterable[str] = ("read", "write"),
                             public_key_pem: str | None = None, stamp_key: str | None = None,
                             expires_at: str | None = None, expires_in_days: int | None = None,
                             pinned_ips: Iterable[str] | None = None) -> dict:
        body = _key_body(mode, scopes, expires_at, expires_in_days, pinned_ips)
        body.update({k: v for k, v in (("public_key_pem", public_key_pem), ("stamp_key", stamp_key)) if v is not None})
        return self._call("POST", f"/orgs/{org_id}/signing-keys", body) or {}

    def rotate_key(self, org_id: str, key_id: str) -> dict:
        data = self._call("POST", f"/orgs/{org_id}/keys/{key_id}/rotate") or {}
        if data.get("key"):
            _redact.default().add(data["key"])
        return data

    def rotate_signing_key(self, org_id: str, key_id: str, *, public_key_pem: str) -> dict:
        return self._call("POST", f"/orgs/{org_id}/signing-keys/{key_id}/rotate",
                          {"public_key_pem": public_key_pem}) or {}

    # -- webhook endpoints (dashboard actions; Endpoints > Webhook endpoint management) --------------

    def register_webhook_endpoint(self, org_id: str, url: str, events: Iterable[str] = (), *,
                                  mode: str = "test") -> dict:
        """Register an endpoint: the endpoint with its ``secret`` (shown once)."""
        data = self._call("POST", f"/orgs/{org_id}/webhook-endpoints",
                          {"url": url, "events": list(events), "mode": mode}) or {}
        if data.get("secret"):
            _redact.default().add(data["secret"])
        return data

    def set_webhook_endpoint_enabled(self, org_id: str, endpoint_id: str, enabled: bool) -> dict:
        return self._call("POST", f"/orgs/{org_id}/webhook-endpoints/{endpoint_id}/enabled", {"enabled": enabled}) or {}

    def rotate_webhook_secret(self, org_id: str, endpoint_id: str) -> dict:
        """A new secret ``{secret, previousValidUntil, ...}``; the old one keeps signing for 24 hours."""
        data = self._call("POST", f"/orgs/{org_id}/webhook-endpoints/{endpoint_id}/rotate-secret") or {}
        if data.get("secret"):
            _redact.default().add(data["secret"])
        return data

    def replay_webhook_delivery(self, org_id: str, endpoint_id: str, delivery_id: str) -> dict:
        return self._call("POST", f"/orgs/{org_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/replay",
                          expect=(200, 202)) or {}

    def replay_webhook_deliveries(self, org_id: str, endpoint_id: str, start: str, end: str,
                                  status: str = "failed") -> dict:
        """Bulk replay of the deliveries created in [start, end]: ``{requeued}``."""
        return self._call("POST", f"/orgs/{org_id}/webhook-endpoints/{endpoint_id}/deliveries/replay",
                          {"from": start, "to": end, "status": status}, expect=(200, 202)) or {}

    def delete_webhook_endpoint(self, org_id: str, endpoint_id: str) -> None:
        self._call("DELETE", f"/orgs/{org_id}/webhook-endpoints/{endpoint_id}")

    # -- payout approvals (dashboard actions; States and transitions > Payout approval) ----------------

    def approve_payout(self, org_id: str, approval_id: str) -> dict:
        """Enough approvers say yes: the approval is executed (or its execution fails). Answers the approval."""
        return self._call("POST", f"/orgs/{org_id}/approvals/{approval_id}/approve") or {}

    def reject_payout(self, org_id: str, approval_id: str) -> dict:
        """An approver says no: nothing is sent. Answers the approval."""
        return self._call("POST", f"/orgs/{org_id}/approvals/{approval_id}/reject") or {}

    def set_approval_policy(self, org_id: str, *, threshold: str | None = None,
                            velocity_cap: dict | None = None) -> dict:
        """The organization's approval threshold (decimal string, None for none) and velocity cap
        (``{count, window_seconds}``, None for none)."""
        return self._call("PUT", f"/orgs/{org_id}/approval-policy",
                          {"threshold": threshold, "velocity_cap": velocity_cap}) or {}

    def advance_clock(self, org_id: str, seconds: float) -> Any:
        data = self._call("POST", f"/orgs/{org_id}/clock", {"advance_seconds": seconds})
        return (data or {}).get("now", data)

    def inject_fault(self, org_id: str, operation: str, kind: str, *, seconds: float | None = None,
                     status: int | None = None, type: str | None = None, count: int = 1) -> None:
        body: dict[str, Any] = {"org_id": org_id, "operation": operation, "kind": kind, "count": count}
        if seconds is not None:
            body["seconds"] = seconds
        if status is not None:
            body["status"] = status
        if type is not None:
            body["type"] = type
        self._call("POST", "/faults", body)

    def open_dispute(self, org_id: str, payment_id: str) -> dict:
        """The card holder disputes a checkout payment; its refunds then answer REFUND_DISPUTED."""
        return self._call("POST", f"/orgs/{org_id}/checkout/payments/{payment_id}/dispute") or {}

    def seed_orders(self, org_id: str, count: int) -> None:
        self._call("POST", f"/orgs/{org_id}/orders/seed", {"count": count})

    def seed_webhook_deliveries(self, org_id: str, endpoint_id: str, count: int) -> None:
        self._call("POST", f"/orgs/{org_id}/webhook-endpoints/{endpoint_id}/deliveries/seed", {"count": count})

    def create_deposit(self, org_id: str, amount: str) -> str:
        """A USD deposit to the funding account, pending until ``complete_deposit``; its id."""
        return self._call("POST", f"/orgs/{org_id}/deposits", {"amount": amount})["depositId"]

    def complete_deposit(self, org_id: str, deposit_id: str) -> None:
        self._call("POST", f"/orgs/{org_id}/deposits/{deposit_id}/complete")

    def record_untracked_movement(self, org_id: str, amount: str) -> None:
        """Money moves on a network whose balance is not tracked."""
        self._call("POST", f"/orgs/{org_id}/ledger/untracked-movements", {"amount": amount})

    def place_hold(self, org_id: str, amount: str) -> None:
        """A hold reserves ``amount`` USD of the balance."""
        self._call("POST", f"/orgs/{org_id}/ledger/holds", {"amount": amount})

    def set_balance_source_readable(self, org_id: str, source: str, readable: bool) -> None:
        """Make balance source ``provider`` or ``wallet`` unreadable (or readable again)."""
        self._call("PUT", f"/orgs/{org_id}/balance-sources/{source}", {"readable": readable})

    def set_history_loaded(self, org_id: str, loaded: bool) -> None:
        """Whether the organization's historical balance transactions are loaded."""
        self._call("PUT", f"/orgs/{org_id}/ledger/loaded", {"loaded": loaded})

    def set_wallet(self, org_id: str, chain: str, currency: str, amount: str, *, mode: str = "live") -> None:
        """What the organization's own wallet holds of a token on a chain (live mode: the sandbox's is empty)."""
        self._call("PUT", f"/orgs/{org_id}/wallet", {"chain": chain, "currency": currency, "amount": amount,
                                                     "mode": mode})


class AdapterWrapper:
    """Wraps a custom adapter: missing methods raise ``NotImplementedError("cannot <method>")``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        declared = getattr(inner, "capabilities", None)
        present = {name for name in OPERATIONS if callable(getattr(inner, name, None))}
        self.capabilities = set(declared) & present if declared is not None else present

    def __getattr__(self, name: str) -> Any:
        if name in OPERATIONS:
            if name not in self.capabilities:
                def missing(*args: Any, **kwargs: Any) -> Any:
                    raise NotImplementedError(f"cannot {name}")
                return missing
        return getattr(self._inner, name)

    def __repr__(self) -> str:
        return f"AdapterWrapper({self._inner!r})"


class Clock:
    """Moves an organization's clock through the operator: ``clock.advance(org_id, seconds)``.

    ``clock.advance(seconds)`` moves the clock of the organization the clock is bound to (the target's).
    """

    def __init__(self, operator: Any, org_id: str | None = None) -> None:
        self.operator = operator
        self.org_id = org_id

    def advance(self, org_id: Any, seconds: float | None = None) -> Any:
        if seconds is None:
            if isinstance(org_id, (int, float)) and not isinstance(org_id, bool):
                org_id, seconds = self.org_id, org_id
            else:
                raise TypeError("clock.advance(org_id, seconds) or clock.advance(seconds)")
        if org_id is None:
            raise TypeError("clock.advance: no organization (pass org_id)")
        return self.operator.advance_clock(org_id, seconds)


def load_operator(target) -> Any | None:
    """The adapter the target file names, or None for ``adapter: none`` (or no operator section)."""
    config = dict(getattr(target, "operator_config", None) or {})
    adapter = config.get("adapter") or "none"
    if adapter == "none":
        return None
    if adapter == "reference":
        url = config.get("url")
        if not url:
            url = getattr(target, "root_url", "").rstrip("/") + "/_operator"
        return HttpOperator(str(url), str(config.get("token") or ""),
                            timeout=float(config.get("timeout") or OPERATOR_TIMEOUT))
    module_name, _, class_name = str(adapter).partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, class_name)
    except (ImportError, AttributeError) as exc:
        raise OperatorError(f"operator adapter {adapter!r} cannot be loaded: {exc}") from exc
    return AdapterWrapper(cls(config))


class OrgHandle:
    """A fresh organization made for one test: ``org_id``, an ``api`` with a read+write test key of it,
    and ``issue_key(**kw) -> str`` to issue more keys (same arguments as ``Operator.issue_key``)."""

    def __init__(self, org_id: str, api: Any, issue_key: Any, key: str | None = None) -> None:
        self.org_id = org_id
        self.api = api
        self.issue_key = issue_key
        self.key = key

    def __iter__(self):  # allows ``org_id, api, issue_key = fresh_org()``
        return iter((self.org_id, self.api, self.issue_key))

    def __repr__(self) -> str:
        return f"OrgHandle(org_id={self.org_id!r})"
