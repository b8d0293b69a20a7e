"""The vocabulary of the target file: its fields, the credentials it may name, and their command-line flags.

Shared by the loader, the validation, the pytest plugin's options and ``payconform run``, so that a field and
its flag are named in one place.
"""

from __future__ import annotations

from typing import Any, Callable

API_PREFIX = "/business/api/v1"

# Every credential the harness knows, in the order of the docs. Each is optional.
CREDENTIAL_NAMES: tuple[str, ...] = (
    "api_key",
    "api_key_pool",
    "read_only_key",
    "refunds_key",
    "crypto_key",
    "live_key",
    "revoked_key",
    "expired_key",
    "pinned_key",
    "rate_limit_key",
    "signing_key_id",
    "signing_private_key",
)
# Credentials that are API keys (svc_test_/svc_live_); the others are signing material.
API_KEY_NAMES = tuple(n for n in CREDENTIAL_NAMES if n not in ("signing_key_id", "signing_private_key"))
TOP_LEVEL_FIELDS = (
    "base_url",
    "org_id",
    "other_org_id",
    "credentials",
    "webhooks",
    "operator",
    "profile",
    "rate_limit",
    "ip_rate_limit",
    "request_timeout",
    "openapi",
)
# Scalar overrides accepted by Target.load(overrides=...) besides credential names.
OVERRIDE_FIELDS = ("base_url", "org_id", "other_org_id", "operator_url", "operator_token", "operator_adapter",
                   "rate_limit", "ip_rate_limit", "request_timeout", "webhook_listen", "webhook_public_url", "openapi")
# The overrides a command line can give, in the order they are applied.
FLAG_FIELDS = ("base_url", "org_id", "other_org_id", "operator_url", "operator_token", "rate_limit",
               "webhook_listen", "webhook_public_url", "openapi", *CREDENTIAL_NAMES)
# Flags that set a field of the target file's `webhooks` section.
WEBHOOK_FLAGS = {"webhook_listen": "listen", "webhook_public_url": "public_url"}
ENV_PREFIX = "env:"


class TargetConfigError(ValueError):
    """The target description is unusable; the message lists every problem."""


def option_name(credential: str) -> str:
    """CLI flag of a credential: ``read_only_key`` -> ``--read-only-key``."""
    return "--" + credential.replace("_", "-")


def flag_overrides(value: Callable[[str], Any]) -> dict[str, Any]:
    """The fields a command line sets, for ``Target.load(overrides=...)``; ``value(field)`` answers the flag's
    value or None. The pytest plugin and ``payconform run`` take the same flags and must agree on them."""
    overrides = {name: value(name) for name in FLAG_FIELDS}
    return {name: v for name, v in overrides.items() if v is not None}
