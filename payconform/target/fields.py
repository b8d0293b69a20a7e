"""The description of the target file: every field, its value's JSON Schema, its default and what it is for.

This table is the one description of the file. The loader and the validation take their field names, defaults
and bounds from it, ``payconform.target.schema`` turns it into ``payconform/schemas/target.schema.json`` (which
editors use to complete and check target files) and into the field reference of docs/target-file.md, and the
pytest plugin's options and ``payconform run`` take the flags named here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

API_PREFIX = "/business/api/v1"
ENV_PREFIX = "env:"
TEST_KEY_PREFIX = "svc_test_"
LIVE_KEY_PREFIX = "svc_live_"
# An operator adapter of one's own: an importable class, ``package.module:Class``.
ADAPTER_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"
REQUIRED = object()  # the default of a field the file must give
UNSET = object()  # the default of a field that is simply absent when the file leaves it out


@dataclass(frozen=True)
class Field:
    """One field: the JSON Schema of its value, what it is, its default (``REQUIRED`` when the file must give
    it, ``UNSET`` when it has none), and for a mapping its own fields (``open``: other keys are allowed too)."""

    name: str
    schema: Mapping[str, Any]
    description: str
    default: Any = UNSET
    fields: tuple["Field", ...] = ()
    open: bool = False
    unlocks: str = ""  # for a credential: the checks it unlocks


def _secret(prefix: str) -> dict[str, Any]:
    """A credential value: a key with ``prefix``, or ``env:NAME``; null or absent means not given."""
    return {"type": ["string", "null"], "pattern": f"^({prefix}|{ENV_PREFIX})"}


_ORG_ID = {"type": "string", "pattern": r"^(?!org_)[^/]*[^/\s][^/]*$"}

CREDENTIALS: tuple[Field, ...] = (
    Field("api_key", _secret(TEST_KEY_PREFIX), "A test key with the `read` and `write` scopes.",
          unlocks="every check a key can make on your organization"),
    Field("api_key_pool", {"type": ["array", "null"], "items": {**_secret(TEST_KEY_PREFIX), "type": "string"}},
          "More keys like `api_key`, of the same organization.",
          unlocks="the run spreads its requests over them, so it is shorter; checks that need more than a minute "
                  "of one key's requests run"),
    Field("read_only_key", _secret(TEST_KEY_PREFIX), "A test key with the `read` scope only.",
          unlocks="the scope refusals; timed reads go out on it"),
    Field("refunds_key", _secret(TEST_KEY_PREFIX), "A test key with the `read`, `write` and `refunds` scopes.",
          unlocks="refunds"),
    Field("crypto_key", _secret(TEST_KEY_PREFIX), "A test key with the `read`, `write` and `crypto_payouts` scopes.",
          unlocks="crypto payouts"),
    Field("live_key", _secret(LIVE_KEY_PREFIX), "A live key (`svc_live_...`) of the same, verified organization.",
          unlocks="live-mode reads and refusals; it never moves money"),
    Field("revoked_key", _secret(TEST_KEY_PREFIX), "A revoked test key.", unlocks="the refusal of a revoked key"),
    Field("expired_key", _secret(TEST_KEY_PREFIX), "An expired test key.", unlocks="the refusal of an expired key"),
    Field("pinned_key", _secret(TEST_KEY_PREFIX), "A test key pinned to a source address the suite never uses.",
          unlocks="the address-pinning refusal"),
    Field("rate_limit_key", _secret(TEST_KEY_PREFIX), "A read+write test key used only by the rate-limit tests.",
          unlocks="the Limits rows a key can trip, without slowing the other keys"),
    Field("signing_key_id", {"type": ["string", "null"]},
          "The id of a registered P-256 signing key (`akid_test_...`).",
          unlocks="signed requests (the spec's Mode B), with `signing_private_key`"),
    Field("signing_private_key", {"type": ["string", "null"], "pattern": f"^{ENV_PREFIX}|PRIVATE KEY"},
          "The private half of `signing_key_id`: a PKCS#8 PEM private key, or `env:NAME`.",
          unlocks="signed requests (the spec's Mode B), with `signing_key_id`"),
)

WEBHOOK_FIELDS: tuple[Field, ...] = (
    Field("listen", {"type": ["string", "null"], "examples": ["127.0.0.1:0", "0.0.0.0:8900"]},
          "Where the run's webhook receiver listens, `host:port` (port 0: a free one).", default="127.0.0.1:0"),
    Field("public_url", {"type": ["string", "null"], "pattern": "^https?://"},
          "The address your target posts deliveries to, when it cannot reach this machine's loopback address "
          "(a tunnel or a host address).", default=None),
)

OPERATOR_FIELDS: tuple[Field, ...] = (
    Field("adapter", {"type": "string", "anyOf": [{"enum": ["none", "reference"]}, {"pattern": ADAPTER_PATTERN}]},
          "What performs the actions an API key cannot: `none`, `reference` (the reference server's operator "
          "API) or `package.module:Class` (your own adapter, handed the whole `operator` mapping).",
          default="none"),
    Field("url", {"type": "string", "pattern": "^https?://"},
          "The operator API of adapter `reference`: `http://host:port/_operator`."),
    Field("token", {"type": "string", "minLength": 1},
          "The operator API's token for adapter `reference`, or `env:NAME`."),
)

FIELDS: tuple[Field, ...] = (
    Field("base_url", {"type": "string", "pattern": f"^https?://[^/?#]+(/[^?#]*)?{API_PREFIX}/*$"},
          f"The deployment's API root: `http(s)://host[:port]`, any path, then the fixed prefix `{API_PREFIX}`.",
          default=REQUIRED),
    Field("org_id", _ORG_ID, "The opaque id of the keys' organization (not an `org_` alias).", default=REQUIRED),
    Field("other_org_id", {**_ORG_ID, "type": ["string", "null"]},
          "An organization the keys may not access, other than `org_id` (the FORBIDDEN checks)."),
    Field("credentials", {"type": "object"},
          "The API keys and signing key the run may use, each optional (see the credentials below); a value "
          "written `env:NAME` is read from the environment variable NAME.",
          fields=CREDENTIALS),
    Field("webhooks", {"type": "object"}, "The run's webhook receiver.", fields=WEBHOOK_FIELDS),
    Field("operator", {"type": "object", "if": {"properties": {"adapter": {"const": "reference"}},
                                                "required": ["adapter"]},
                       "then": {"required": ["url", "token"]}},
          "What performs the actions an API key cannot (create organizations, issue keys, approve payouts, move "
          "a sandbox clock).", fields=OPERATOR_FIELDS, open=True),
    Field("profile", {"type": "object"},
          "Overrides of contract/profile.default.yaml, deep-merged over it, where your deployment chose otherwise "
          "than the profile (`profile.fuzz`: the fuzz phase's settings).", default={}, open=True),
    Field("rate_limit", {"type": "integer", "minimum": 1},
          "Requests per minute per credential the run stays under.", default=100),
    Field("ip_rate_limit", {"type": "integer", "minimum": 1},
          "Requests per minute per source address the run stays under.", default=2000),
    Field("request_timeout", {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
          "Seconds for one request: connect, send and the whole answer.", default=10.0),
    Field("openapi", {"type": ["string", "null"], "minLength": 1},
          "Your deployment's OpenAPI document: a file path (relative to the target file) or a URL on the "
          "target's host."),
)
FIELD: dict[str, Field] = {f.name: f for f in FIELDS}

# Every credential the harness knows, in the order of the docs. Each is optional.
CREDENTIAL_NAMES: tuple[str, ...] = tuple(f.name for f in CREDENTIALS)
# Credentials that are API keys (svc_test_/svc_live_); the others are signing material.
API_KEY_NAMES = tuple(n for n in CREDENTIAL_NAMES if n not in ("signing_key_id", "signing_private_key"))
TOP_LEVEL_FIELDS: tuple[str, ...] = tuple(FIELD)
WEBHOOK_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in WEBHOOK_FIELDS)
# Scalar overrides accepted by Target.load(overrides=...) besides credential names.
OVERRIDE_FIELDS = ("base_url", "org_id", "other_org_id", "operator_url", "operator_token", "operator_adapter",
                   "rate_limit", "ip_rate_limit", "request_timeout", "webhook_listen", "webhook_public_url", "openapi")
# The overrides a command line can give, in the order they are applied.
FLAG_FIELDS = ("base_url", "org_id", "other_org_id", "operator_url", "operator_token", "rate_limit",
               "webhook_listen", "webhook_public_url", "openapi", *CREDENTIAL_NAMES)
# Flags that set a field of the target file's `webhooks` section.
WEBHOOK_FLAGS = {"webhook_listen": "listen", "webhook_public_url": "public_url"}


class TargetConfigError(ValueError):
    """The target description is unusable; the message lists every problem."""


def default(name: str) -> Any:
    """The default of top-level field ``name`` (a fresh copy of a mapping; None when it has none)."""
    value = FIELD[name].default
    if value is UNSET or value is REQUIRED:
        return None
    return dict(value) if isinstance(value, Mapping) else value


def section_defaults(fields: tuple[Field, ...]) -> dict[str, Any]:
    """The fields of a section that have a default, with it: what the loader fills in when the file omits the
    section."""
    return {f.name: f.default for f in fields if f.default is not UNSET}


def option_name(credential: str) -> str:
    """CLI flag of a credential: ``read_only_key`` -> ``--read-only-key``."""
    return "--" + credential.replace("_", "-")


def flag_overrides(value: Callable[[str], Any]) -> dict[str, Any]:
    """The fields a command line sets, for ``Target.load(overrides=...)``; ``value(field)`` answers the flag's
    value or None. The pytest plugin and ``payconform run`` take the same flags and must agree on them."""
    overrides = {name: value(name) for name in FLAG_FIELDS}
    return {name: v for name, v in overrides.items() if v is not None}
