"""Preflight: in a handful of requests, is the target this API and is each credential what the file says?

A run against a dead port, a web server that is not this API, or a refused key would otherwise print
hundreds of failures with one cause. The preflight finds that cause in seconds and says it once; the run
then ends with exit code 2. It judges nothing the conformance tests judge: a revoked key that still works
is reported, not failed here (the revocation tests fail it, with the requirement).

Requests: one unknown route, one read per configured API key, one read of ``other_org_id``, and at most
``PREFLIGHT_PROBES`` probes of the profile's most used routes (``profile.preflight_step``; a route that
differs is a warning: its tests end as profile mismatches).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

from .client import Api, Exchange, TargetError
from .context import RunContext
from .profile.document import DocumentError
from .profile.preflight_step import profile_step
from .reachability import static_cause
from .target import API_KEY_NAMES, API_PREFIX, Target
from .webhooks import receiver_settings

# Seconds a preflight request may take: a target that does not answer is told apart in seconds.
PREFLIGHT_TIMEOUT = 5.0
POLICY_PATH = "/payments/organizations/{orgId}/policy"
# Credentials the file describes as refused: the preflight reports what they answered, never fails on it.
REFUSED_KEYS = {"revoked_key": "UNAUTHORIZED", "expired_key": "KEY_EXPIRED", "pinned_key": "KEY_IP_NOT_ALLOWED"}
RATE_HEADERS = ("ratelimit-remaining", "x-ratelimit-remaining", "ratelimit-limit", "x-ratelimit-limit",
                "ratelimit")


class PreflightFailed(Exception):
    """The target cannot be tested as described: the one cause, said once."""


@dataclass
class Preflight:
    """What the preflight saw: one line per check, the fatal cause if any, and the requests it spent."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fatal: str | None = None
    requests: int = 0

    @property
    def ok(self) -> bool:
        return self.fatal is None


def _body(ex: Exchange) -> Any:
    """The parsed body, or None when it is not JSON (a foreign server's page)."""
    try:
        return ex.json
    except TargetError:
        return None


def _error_type(ex: Exchange) -> str | None:
    body = _body(ex)
    return body.get("type") if isinstance(body, dict) and isinstance(body.get("type"), str) else None


def _looks_like_this_api(ex: Exchange) -> str | None:
    """None when the answer has this API's error shape; else what it looked like instead."""
    body = _body(ex)
    if not isinstance(body, dict):
        kind = ex.headers.get("content-type", "no content type")
        return f"HTTP {ex.status} with a body that is not a JSON object ({kind}: {ex.text[:80]!r})"
    if not isinstance(body.get("type"), str) or not isinstance(body.get("requestId"), str):
        return f"HTTP {ex.status} with a JSON body that is not the error body (keys: {sorted(body)[:8]})"
    if not ex.request_id:
        return f"HTTP {ex.status} {body['type']} without an x-request-id header"
    return None


def _path(base_url: str) -> str:
    """The path part of ``base_url``, without its trailing slash."""
    return urlsplit(base_url).path.rstrip("/")


def _headroom(ex: Exchange) -> str:
    shown = [f"{name}: {ex.headers[name]}" for name in RATE_HEADERS if name in ex.headers]
    return ", ".join(shown) if shown else "the target shows no rate-limit headers"


class _Run:
    """One preflight: sends through ``Api`` (paced, redacted, live-key guarded) and collects lines."""

    def __init__(self, target: Target, make_api: Callable[[str | None], Api], context: RunContext | None) -> None:
        self.target = target
        self.make_api = make_api
        self.context = context  # the run (its pacer) a document to read is fetched through
        self.result = Preflight()
        self.pool_valid = 0  # pool keys are told in one line: a pool may hold dozens

    def get(self, credential: str | None, path: str, org_id: str | None = None) -> Exchange:
        api = self.make_api(credential)
        if org_id is not None:
            api.org_id = org_id
        self.result.requests += 1
        try:
            return api.request("GET", path, raw=True)
        except TargetError as exc:
            first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise PreflightFailed(f"the target at {self.target.base_url} does not answer: {first}") from None
        finally:
            api.close()

    def route_probe(self) -> None:
        path = f"/payconform-preflight-{secrets.token_hex(4)}"
        ex = self.get(self.target.api_key, path)
        problem = _looks_like_this_api(ex)
        if problem:
            raise PreflightFailed(f"{self.target.base_url} does not answer as this API: an unknown route gave "
                                  f"{problem}; is base_url right (it includes {API_PREFIX})?")
        kind = _error_type(ex)
        note = "" if (ex.status, kind) == (404, "ROUTE_NOT_FOUND") else " (the routing tests will judge it)"
        self.result.lines.append(f"base URL answers as this API: unknown route -> {ex.status} {kind}{note}")

    def key(self, name: str, key: str) -> None:
        ex = self.get(key, POLICY_PATH)
        kind = _error_type(ex)
        expected_refusal = REFUSED_KEYS.get(name)
        if expected_refusal:
            seen = f"{ex.status} {kind or ''}".strip()
            line = f"{name}: answers {seen}"
            if kind != expected_refusal:
                self.result.warnings.append(f"{line}; the target file describes it as refused with "
                                            f"{expected_refusal} (its tests will judge it)")
            self.result.lines.append(line)
            return
        if ex.status == 200:
            line = (f"valid for organization {self.target.org_id} "
                    f"({'live' if key.startswith('svc_live_') else 'test'} key)")
            if name.startswith("api_key_pool["):
                self.pool_valid += 1
            else:
                self.result.lines.append(f"{name}: {line}")
            return
        if (ex.status, kind) == (429, "RATE_LIMITED"):
            # the key is known (its window is full): a run started right after another's rate-limit tests
            self.result.lines.append(f"{name}: answers 429 RATE_LIMITED, its window full of earlier requests "
                                     "(the rate-limit tests count them); not judged")
            return
        if ex.status == 404:
            # a route the spec defines is not there: the key was never judged, the base URL's path is wrong
            answer = f"{ex.status} {kind}" if kind else str(ex.status)
            path = _path(self.target.base_url) + POLICY_PATH.format(orgId=self.target.org_id)
            raise PreflightFailed(
                f"the base URL's path does not reach this API: {self.target.base_url} answered {answer} for GET "
                f"{path} (the organization's policy, read with {name}); is the path right? Before {API_PREFIX} "
                f"comes only the path where the deployment serves the API (x-request-id {ex.request_id})")
        if kind == "ACCOUNT_BLOCKED":
            raise PreflightFailed(f"{name} is refused: the organization {self.target.org_id} is suspended "
                                  f"(ACCOUNT_BLOCKED, x-request-id {ex.request_id})")
        why = {"UNAUTHORIZED": "the target does not know this key (UNAUTHORIZED)",
               "KEY_EXPIRED": "the key has expired (KEY_EXPIRED)",
               "KEY_IP_NOT_ALLOWED": "the key is pinned to other source addresses (KEY_IP_NOT_ALLOWED)",
               "FORBIDDEN": f"the key cannot access organization {self.target.org_id} (FORBIDDEN): is org_id right?",
               }.get(kind or "", f"a read of the organization's policy answered {ex.status} {kind or ''}".rstrip())
        raise PreflightFailed(f"{name} is refused: {why} (x-request-id {ex.request_id})")

    def other_org(self) -> None:
        ex = self.get(self.target.api_key, POLICY_PATH, org_id=self.target.other_org_id)
        kind = _error_type(ex)
        line = f"other_org_id {self.target.other_org_id}: api_key answers {ex.status} {kind or ''}".rstrip()
        if (ex.status, kind) != (403, "FORBIDDEN"):
            self.result.warnings.append(f"{line}; the wrong-organization tests expect 403 FORBIDDEN "
                                        "(is other_org_id an organization this key may not access?)")
        self.result.lines.append(line)
        self.result.lines.append(f"rate-limit headroom: {_headroom(ex)}; the run paces at "
                                 f"{self.target.rate_limit} requests per minute per credential")

    def profile(self) -> None:
        """The profile's most used routes, probed with ``api_key`` (``PREFLIGHT_PROBES`` requests at most)."""
        step = profile_step(self.target, self.make_api(self.target.api_key), run=self.context)
        self.result.requests += step.requests
        self.result.lines += step.lines
        self.result.warnings += step.warnings


def configured_keys(target: Target) -> list[tuple[str, str]]:
    """(name, key) of every API key in the target file, pool keys numbered, api_key first."""
    keys: list[tuple[str, str]] = []
    for name in API_KEY_NAMES:
        value: Any = target.credential(name)
        if name == "api_key_pool":
            keys += [(f"api_key_pool[{i}]", k) for i, k in enumerate(value or []) if k != target.api_key]
        elif isinstance(value, str) and value:
            keys.append((name, value))
    return keys


def receiver_line(target: Target, result: Preflight) -> None:
    """Say once whether the webhook tests can expect deliveries (``payconform.reachability``)."""
    cause = static_cause(target)
    listen, public_url = receiver_settings(target.webhooks)
    if cause:
        result.warnings.append(f"webhook receiver: {cause}; the webhook tests are skipped")
    elif public_url:
        result.lines.append(f"webhook receiver: listening on {listen}, advertised as {public_url} (each worker "
                            "confirms it with one delivery before its first webhook test)")


def preflight(target: Target, make_api: Callable[[str | None], Api] | None = None, *,
              run: RunContext | None = None) -> Preflight:
    """Probe ``target`` (through ``run``: its pacer; a detached run by default); ``result.fatal`` says why the
    run cannot go on (the CLI exits 2 then)."""
    def default_api(credential: str | None, sent_through: RunContext | None = run) -> Api:
        return Api(target, credential, run=sent_through,
                   timeout=min(PREFLIGHT_TIMEOUT, float(target.request_timeout)))

    run = _Run(target, make_api or default_api, run)
    keys = configured_keys(target)
    if not keys:
        run.result.fatal = ("no credential: the target file (or --api-key) names no API key, so no check "
                            "can run; add credentials.api_key (env:NAME reads it from the environment)")
        return run.result
    try:
        run.route_probe()
        for name, key in keys:
            run.key(name, key)
        if run.pool_valid:
            run.result.lines.append(f"api_key_pool: {run.pool_valid} more key(s) valid for organization "
                                    f"{target.org_id}")
        if target.other_org_id and target.api_key:
            run.other_org()
        if target.api_key:
            run.profile()
        receiver_line(target, run.result)
    except (PreflightFailed, DocumentError) as exc:
        run.result.fatal = str(exc)
    return run.result


def print_preflight(result: Preflight, write: Callable[[str], Any]) -> None:
    """The preflight's lines as the run's header shows them."""
    for line in result.lines:
        write(f"preflight: {line}")
    for line in result.warnings:
        write(f"preflight: warning: {line}")
    if result.fatal:
        write(f"payconform: cannot test this target: {result.fatal}")
    write(f"preflight: {result.requests} request(s)")
