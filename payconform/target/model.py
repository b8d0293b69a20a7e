"""``Target``: a deployment under test, read from its target file and written back.

``Target.load(path, overrides)`` reads it, replaces ``env:NAME`` values by the environment variable NAME,
applies overrides (from CLI flags) and validates. ``Target.dump(path)`` writes it back with mode 0600.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

import yaml

from .fields import (CREDENTIAL_NAMES, ENV_PREFIX, OPERATOR_FIELDS, OVERRIDE_FIELDS, TOP_LEVEL_FIELDS, WEBHOOK_FIELDS,
                     WEBHOOK_FLAGS, TargetConfigError, default, section_defaults)
from . import validation


def _default_webhooks() -> dict:
    return section_defaults(WEBHOOK_FIELDS)


def _default_operator() -> dict:
    return section_defaults(OPERATOR_FIELDS)


def _document_location(value: Any, base: Path) -> Any:
    """The ``openapi`` field as the run uses it: a URL as given, a relative file path made absolute from
    ``base`` (the target file's directory, or the working directory for a flag), so a copy of the target file
    written elsewhere still names the same document."""
    if not isinstance(value, str) or not value or value.startswith(("http://", "https://")):
        return value
    return str((base / Path(value).expanduser()).resolve())


@dataclass
class Target:
    base_url: str
    org_id: str | None = None
    other_org_id: str | None = None
    credentials: dict[str, Any] = field(default_factory=dict)
    webhooks: dict[str, Any] = field(default_factory=_default_webhooks)
    operator_config: dict[str, Any] = field(default_factory=_default_operator)
    profile: dict[str, Any] = field(default_factory=dict)
    rate_limit: int = default("rate_limit")
    ip_rate_limit: int = default("ip_rate_limit")
    request_timeout: float = default("request_timeout")
    openapi: str | None = None  # the deployment's OpenAPI document: an absolute file path or a URL on its host
    source: Path | None = None
    # name -> "env:NAME" for values that were read from the environment (kept as references on dump)
    env_refs: dict[str, str] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:  # never show secrets
        creds = ", ".join(sorted(self.credentials))
        return f"Target(base_url={self.base_url!r}, org_id={self.org_id!r}, credentials=[{creds}])"

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        overrides: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        validate: bool = True,
    ) -> "Target":
        """Read ``path`` (YAML or JSON; optional), apply ``overrides``, resolve ``env:`` values, validate."""
        data: dict[str, Any] = {}
        if path is not None:
            p = Path(path)
            try:
                text = p.read_text(encoding="utf-8")
            except OSError as exc:
                raise TargetConfigError(f"target file {p}: cannot read it ({exc.strerror or exc})") from exc
            try:
                loaded = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
            except (ValueError, yaml.YAMLError) as exc:
                raise TargetConfigError(f"target file {p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}: {exc}") from exc
            if loaded is None:
                loaded = {}
            if not isinstance(loaded, Mapping):
                raise TargetConfigError(f"target file {p}: expected a mapping at the top level, got {type(loaded).__name__}")
            data = copy.deepcopy(dict(loaded))
        target = cls.from_dict(data, overrides=overrides, environ=environ, source=Path(path) if path else None,
                               validate=validate)
        return target

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        overrides: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
        source: Path | None = None,
        validate: bool = True,
    ) -> "Target":
        where = f"target file {source}" if source else "target"
        problems: list[str] = []
        data = copy.deepcopy(dict(data))
        unknown = sorted(set(data) - set(TOP_LEVEL_FIELDS))
        for name in unknown:
            problems.append(f"unknown field {name!r} (known: {', '.join(TOP_LEVEL_FIELDS)})")

        creds = data.get("credentials") or {}
        if not isinstance(creds, Mapping):
            problems.append("credentials must be a mapping of credential name to value")
            creds = {}
        creds = dict(creds)
        operator = data.get("operator") or {}
        if not isinstance(operator, Mapping):
            problems.append("operator must be a mapping with adapter, url, token")
            operator = {}
        operator = dict(operator)
        webhooks = data.get("webhooks")
        if webhooks is None:
            webhooks = _default_webhooks()
        if not isinstance(webhooks, Mapping):
            problems.append("webhooks must be a mapping with listen and public_url")
            webhooks = _default_webhooks()
        profile = data.get("profile") or {}
        if not isinstance(profile, Mapping):
            problems.append("profile must be a mapping (overrides of contract/profile.default.yaml)")
            profile = {}
        if data.get("openapi") is not None:
            data["openapi"] = _document_location(data["openapi"], source.parent if source else Path.cwd())

        # -- overrides (CLI flags) -------------------------------------------------------------
        for key, value in (overrides or {}).items():
            if value is None:
                continue
            if key in CREDENTIAL_NAMES:
                if key == "api_key_pool" and isinstance(value, str):
                    value = [v.strip() for v in value.split(",") if v.strip()]
                creds[key] = value
            elif key == "operator_url":
                operator["url"] = value
                operator.setdefault("adapter", "reference")
                if operator.get("adapter") in (None, "none"):
                    operator["adapter"] = "reference"
            elif key == "operator_token":
                operator["token"] = value
            elif key == "operator_adapter":
                operator["adapter"] = value
            elif key == "openapi":
                data["openapi"] = _document_location(value, Path.cwd())
            elif key in WEBHOOK_FLAGS and isinstance(webhooks, Mapping):
                webhooks = {**webhooks, WEBHOOK_FLAGS[key]: value}
            elif key in OVERRIDE_FIELDS:
                data[key] = value
            else:
                problems.append(f"unknown override {key!r}")

        # -- env: references -----------------------------------------------------------------
        env = os.environ if environ is None else environ
        env_refs: dict[str, str] = {}

        def resolve(name: str, value: Any) -> Any:
            if isinstance(value, str) and value.startswith(ENV_PREFIX):
                var = value[len(ENV_PREFIX):]
                env_refs[name] = value
                if var not in env or env[var] == "":
                    problems.append(f"{name}: environment variable {var} is not set")
                    return None
                return env[var]
            return value

        for name in list(creds):
            value = creds[name]
            if isinstance(value, list):
                creds[name] = [resolve(f"{name}[{i}]", v) for i, v in enumerate(value)]
            else:
                creds[name] = resolve(name, value)
        if "token" in operator:
            operator["token"] = resolve("operator.token", operator["token"])
        creds = {k: v for k, v in creds.items() if v not in (None, "", [])}

        base_url = data.get("base_url")
        target = cls(
            base_url=str(base_url).rstrip("/") if isinstance(base_url, str) else base_url,  # type: ignore[arg-type]
            org_id=data.get("org_id"),
            other_org_id=data.get("other_org_id"),
            credentials=creds,
            webhooks=dict(webhooks),
            operator_config=operator or _default_operator(),
            profile=dict(profile),
            rate_limit=data.get("rate_limit", default("rate_limit")),
            ip_rate_limit=data.get("ip_rate_limit", default("ip_rate_limit")),
            request_timeout=data.get("request_timeout", default("request_timeout")),
            openapi=data.get("openapi"),
            source=source,
            env_refs=env_refs,
        )
        target.operator_config.setdefault("adapter", "none")
        if validate:
            problems.extend(validation.problems(target))
        if problems:
            raise TargetConfigError(f"{where} is not usable:\n" + "\n".join(f"  - {p}" for p in problems))
        target.rate_limit = int(target.rate_limit)
        target.ip_rate_limit = int(target.ip_rate_limit)
        target.request_timeout = float(target.request_timeout)
        return target

    def validate(self) -> None:
        problems = validation.problems(self)
        if problems:
            raise TargetConfigError("target is not usable:\n" + "\n".join(f"  - {p}" for p in problems))

    # -- accessors -----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc

    @property
    def root_url(self) -> str:
        """``scheme://host:port`` of the target (no prefix)."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def api_key(self) -> str | None:
        return self.credentials.get("api_key")

    @property
    def pool(self) -> list[str]:
        """The equivalent read+write keys to spread load over (``api_key_pool``, else ``[api_key]``)."""
        pool = list(self.credentials.get("api_key_pool") or [])
        if not pool and self.api_key:
            pool = [self.api_key]
        return pool

    @property
    def writers(self) -> list[str]:
        """The keys of ``org_id`` that can make and remove its rows, to spread many such requests over: the pool,
        and ``refunds_key``, which holds ``write`` (Endpoints > Checkout: a refund "needs a key with the
        `refunds` scope (plus `write`)"); its own budget of requests is then not left idle."""
        refunds = self.credentials.get("refunds_key")
        return self.pool + ([refunds] if isinstance(refunds, str) and refunds and refunds not in self.pool else [])

    def credential(self, name: str) -> Any:
        return self.credentials.get(name)

    def has(self, name: str) -> bool:
        if name == "api_key":
            return bool(self.pool)
        return bool(self.credentials.get(name))

    @property
    def operator_token(self) -> str | None:
        return self.operator_config.get("token")

    def secrets(self) -> list[str]:
        """Every secret value of the target (for the redactor)."""
        out: list[str] = []
        for value in self.credentials.values():
            if isinstance(value, list):
                out.extend(v for v in value if isinstance(v, str))
            elif isinstance(value, str):
                out.append(value)
        if self.operator_token:
            out.append(str(self.operator_token))
        return out

    # -- output --------------------------------------------------------------------------------

    def to_dict(self, keep_env_refs: bool = True) -> dict[str, Any]:
        creds: dict[str, Any] = {}
        for name, value in self.credentials.items():
            if keep_env_refs and name in self.env_refs:
                creds[name] = self.env_refs[name]
            elif isinstance(value, list):
                creds[name] = [
                    self.env_refs.get(f"{name}[{i}]", v) if keep_env_refs else v for i, v in enumerate(value)
                ]
            else:
                creds[name] = value
        operator = dict(self.operator_config)
        if keep_env_refs and "operator.token" in self.env_refs:
            operator["token"] = self.env_refs["operator.token"]
        out: dict[str, Any] = {"base_url": self.base_url, "org_id": self.org_id}
        if self.other_org_id:
            out["other_org_id"] = self.other_org_id
        out.update(
            credentials=creds,
            webhooks=dict(self.webhooks),
            operator=operator,
            profile=dict(self.profile),
            rate_limit=self.rate_limit,
            ip_rate_limit=self.ip_rate_limit,
            request_timeout=self.request_timeout,
        )
        if self.openapi:
            out["openapi"] = self.openapi
        return out

    def dump(self, path: str | Path) -> Path:
        """Write the target file (YAML, or JSON for a ``.json`` name) with mode 0600."""
        p = Path(path)
        data = self.to_dict()
        text = json.dumps(data, indent=2) + "\n" if p.suffix.lower() == ".json" else yaml.safe_dump(data, sort_keys=False)
        if p.parent and not p.parent.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        return p

