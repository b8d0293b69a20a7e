"""Failures with one cause, grouped: a first failing run a user can act on.

A deployment that refuses the run's key, does not serve a route, cannot reach the receiver or stopped
answering fails dozens of tests for one reason. Each group states the cause once and lists its tests; a
cause shared by fewer than ``MIN_GROUP`` failures is left to the failure itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .verdicts import Verdict

MIN_GROUP = 3
_ANSWERED = re.compile(r"target answered: (\S+) (\S+) -> (\d{3})(?: ([A-Z_]+))?")
_REFUSED_KEY = {"UNAUTHORIZED", "KEY_EXPIRED", "KEY_IP_NOT_ALLOWED", "ACCOUNT_BLOCKED"}


def cause(message: str | None) -> str | None:
    """The cause a failure message shows, worded for the user, or None when it is the test's own finding."""
    text = message or ""
    if "target stopped answering" in text:
        return "the target stopped answering (connections refused, reset or timed out)"
    if "none arrived at" in text:
        return "no webhook delivery arrived: is the receiver reachable from the target (webhooks.public_url)?"
    answered = _ANSWERED.findall(text)
    if not answered:
        return None
    _method, _url, status, kind = answered[-1]
    if kind == "ROUTE_NOT_FOUND":
        return "the target does not serve a route the spec lists (404 ROUTE_NOT_FOUND)"
    if kind in _REFUSED_KEY and "expected: 401" not in text and "expected: 403" not in text:
        return f"the target refused the run's credential ({status} {kind})"
    if status.startswith("5"):
        return f"the target answered {status} {kind or ''}".rstrip() + " (a server error)"
    return None


def failure_causes(tests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``[{cause, tests: [nodeid, ...], requirements: [id, ...]}]`` for each cause shared by ``MIN_GROUP`` or
    more failed tests, the largest first."""
    groups: dict[str, dict[str, Any]] = {}
    for row in tests:
        if row.get("verdict") != Verdict.FAILED.value:
            continue
        found = cause(row.get("message"))
        if found is None:
            continue
        group = groups.setdefault(found, {"cause": found, "tests": [], "requirements": []})
        group["tests"].append(row["nodeid"])
        group["requirements"] += [r for r in row.get("requirements") or [] if r not in group["requirements"]]
    shared = [g for g in groups.values() if len(g["tests"]) >= MIN_GROUP]
    return sorted(shared, key=lambda g: (-len(g["tests"]), g["cause"]))
