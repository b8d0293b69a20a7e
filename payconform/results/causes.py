"""Failures with one cause, grouped: a first failing run a user can act on.

A deployment that refuses the run's key, does not serve a route, cannot reach the receiver or stopped
answering fails dozens of tests for one reason. Each group states the cause once and lists its tests; a
cause shared by fewer than ``MIN_GROUP`` failures is left to the failure itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from .verdicts import Verdict

MIN_GROUP = 3
_ANSWERED = re.compile(r"target answered: (\S+) (\S+) -> (\d{3})(?: ([A-Z_]+))?")
_REFUSED_KEY = {"UNAUTHORIZED", "KEY_EXPIRED", "KEY_IP_NOT_ALLOWED", "ACCOUNT_BLOCKED"}


def _route_source(url: str, contract: Any) -> str | None:
    """``spec`` or ``profile``: where the route of ``url`` comes from (the profile operation whose path it
    is), or None when no operation of the contract has that path."""
    path = urlsplit(url).path.rstrip("/")
    ops = [op for op in ((contract.profile.get("operations") or {}) if contract is not None else {}).values()
           if isinstance(op, Mapping)]
    for op in sorted(ops, key=lambda op: str(op.get("path") or "").count("{")):  # literal segments first
        template = str(op.get("path") or "")
        pattern = re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template.rstrip("/")))
        if template and re.search(f"{pattern}$", path):
            return "profile" if op.get("source") == "profile" else "spec"
    return None


_NOT_SERVED = {
    "spec": "the target does not serve a route the spec lists (404 ROUTE_NOT_FOUND)",
    "profile": "the target does not serve a route the profile gives, where the spec does not show the path "
               "(404 ROUTE_NOT_FOUND): set the operation's path under the target file's `profile: operations`",
    None: "the target does not serve a route the run called (404 ROUTE_NOT_FOUND)",
}


def cause(message: str | None, contract: Any = None) -> str | None:
    """The cause a failure message shows, worded for the user, or None when it is the test's own finding; a
    missing route is called the spec's or the profile's when ``contract`` tells which."""
    text = message or ""
    if "target stopped answering" in text:
        return "the target stopped answering (connections refused, reset or timed out)"
    if "none arrived at" in text:
        return "no webhook delivery arrived: is the receiver reachable from the target (webhooks.public_url)?"
    answered = _ANSWERED.findall(text)
    if not answered:
        return None
    _method, url, status, kind = answered[-1]
    if kind == "ROUTE_NOT_FOUND":
        return _NOT_SERVED[_route_source(url, contract)]
    if kind in _REFUSED_KEY and "expected: 401" not in text and "expected: 403" not in text:
        return f"the target refused the run's credential ({status} {kind})"
    if status.startswith("5"):
        return f"the target answered {status} {kind or ''}".rstrip() + " (a server error)"
    return None


def failure_causes(tests: Iterable[Mapping[str, Any]], contract: Any = None) -> list[dict[str, Any]]:
    """``[{cause, tests: [nodeid, ...], requirements: [id, ...]}]`` for each cause shared by ``MIN_GROUP`` or
    more failed tests, the largest first."""
    groups: dict[str, dict[str, Any]] = {}
    for row in tests:
        if row.get("verdict") != Verdict.FAILED.value:
            continue
        found = cause(row.get("message"), contract)
        if found is None:
            continue
        group = groups.setdefault(found, {"cause": found, "tests": [], "requirements": []})
        group["tests"].append(row["nodeid"])
        group["requirements"] += [r for r in row.get("requirements") or [] if r not in group["requirements"]]
    shared = [g for g in groups.values() if len(g["tests"]) >= MIN_GROUP]
    return sorted(shared, key=lambda g: (-len(g["tests"]), g["cause"]))
