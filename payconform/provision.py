"""Create, through an operator, everything a target file describes, and answer the ``Target``.

The main organization is verified, has payments enabled and the features ``developer`` and
``mass_payouts``; the other organization is a second one the main keys cannot access. Credentials:
a pool of read+write test keys (``api_key`` is the first), ``read_only_key``, ``refunds_key``,
``crypto_key``, ``live_key`` (live mode, read+write), ``revoked_key`` (issued then revoked),
``expired_key`` (expired one day ago), ``pinned_key`` (pinned to TEST-NET 192.0.2.10),
``rate_limit_key``, and a Mode B signing key: a P-256 pair made here, whose public half is registered
(read+write, test mode) and whose key id and private half become ``signing_key_id`` and
``signing_private_key`` (none when the operator API cannot register signing keys).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

from . import redact as _redact
from . import signer as _signer
from .operator import DEFAULT_FEATURES, OperatorError
from .target import Target

POOL_SIZE = 12
PINNED_ADDRESS = "192.0.2.10"


def _key(data: Mapping[str, Any], what: str) -> str:
    key = data.get("key") if isinstance(data, Mapping) else None
    if not key:
        raise RuntimeError(f"provision: the operator issued no key for {what}: {_redact.redact(data)}")
    _redact.default().add(key)
    return str(key)


def _signing_key(operator: Any, org: str) -> dict[str, str]:
    """A registered Mode B key: ``signing_key_id`` and ``signing_private_key``, or nothing when the operator
    API has no signing-key route (404): Mode B tests then skip with "needs signing_key"."""
    private_key = _signer.generate_private_key_pem()
    try:
        data = operator.register_signing_key(org, mode="test", scopes=("read", "write"),
                                             public_key_pem=_signer.public_key_pem(private_key))
    except OperatorError as exc:
        if exc.status == 404:
            return {}
        raise
    _redact.default().add(private_key)
    return {"signing_key_id": str(data["id"]), "signing_private_key": private_key}


def provision(
    operator: Any,
    base_url: str,
    *,
    operator_config: Mapping[str, Any] | None = None,
    pool_size: int = POOL_SIZE,
    rate_limit: int = 100,
    ip_rate_limit: int = 2000,
    request_timeout: float = 10.0,
    profile: Mapping[str, Any] | None = None,
    webhooks: Mapping[str, Any] | None = None,
) -> Target:
    org = operator.create_org(verified=True, payments_enabled=True, suspended=False, features=DEFAULT_FEATURES)
    other = operator.create_org(verified=True, payments_enabled=True, suspended=False, features=DEFAULT_FEATURES)

    def issue(what: str, **kw: Any) -> dict:
        return operator.issue_key(org, **kw)

    rw = ("read", "write")
    pool = [_key(issue(f"pool key {i}", mode="test", scopes=rw), f"pool key {i}") for i in range(pool_size)]
    creds: dict[str, Any] = {"api_key": pool[0], "api_key_pool": pool}
    creds["read_only_key"] = _key(issue("read_only_key", mode="test", scopes=("read",)), "read_only_key")
    creds["refunds_key"] = _key(issue("refunds_key", mode="test", scopes=("read", "write", "refunds")), "refunds_key")
    creds["crypto_key"] = _key(issue("crypto_key", mode="test", scopes=("read", "write", "crypto_payouts")), "crypto_key")
    creds["live_key"] = _key(issue("live_key", mode="live", scopes=rw), "live_key")
    revoked = issue("revoked_key", mode="test", scopes=rw)
    creds["revoked_key"] = _key(revoked, "revoked_key")
    operator.revoke_key(org, revoked["id"])
    past = (datetime.now(timezone.utc) - timedelta(days=1)).isoformat(timespec="seconds").replace("+00:00", "Z")
    creds["expired_key"] = _key(issue("expired_key", mode="test", scopes=rw, expires_at=past), "expired_key")
    creds["pinned_key"] = _key(issue("pinned_key", mode="test", scopes=rw, pinned_ips=[PINNED_ADDRESS]), "pinned_key")
    creds["rate_limit_key"] = _key(issue("rate_limit_key", mode="test", scopes=rw), "rate_limit_key")
    creds.update(_signing_key(operator, org))

    data = {
        "base_url": base_url,
        "org_id": org,
        "other_org_id": other,
        "credentials": creds,
        "webhooks": dict(webhooks or {"listen": "127.0.0.1:0", "public_url": None}),
        "operator": dict(operator_config or {"adapter": "none"}),
        "profile": dict(profile or {}),
        "rate_limit": rate_limit,
        "ip_rate_limit": ip_rate_limit,
        "request_timeout": request_timeout,
    }
    return Target.from_dict(data)


def provision_reference(server: Any, **kwargs: Any) -> Target:
    """Provision a running reference server (``refserver.RefServer``) through its own operator API; the
    target file then names that operator, so tests needing privileged actions can run."""
    from .operator import HttpOperator

    op = HttpOperator(server.operator_url, server.operator_token)
    try:
        return provision(op, server.base_url, operator_config={
            "adapter": "reference", "url": server.operator_url, "token": server.operator_token}, **kwargs)
    finally:
        op.close()

