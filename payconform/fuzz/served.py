"""Where the target serves each operation of the contract's documents, and what a 404 ROUTE_NOT_FOUND means.

A path the spec does not show is the profile's choice: the fuzz phase sends each such operation where the
merged profile puts it (`placed`), so a deployment whose profile names its own paths is fuzzed there. A
deployment that serves an operation elsewhere than the profile says is not judged by that path: the stateless
test of the operation ends as a profile mismatch naming the entry, and every operation whose path the profile
chose carries the mark `x-profile-path`, by which the suites' status check does not hold a 404 ROUTE_NOT_FOUND
there against the document's statuses (the error body and request id of that answer are still checked).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

import pytest

from ..checks.rules import Answer
from ..contract import HTTP_METHODS
from ..results.mismatch import ProfileMismatch


PROFILE_PATH = "x-profile-path"  # the mark of an operation whose path the profile chose (the spec does not show it)


def route_not_found(status: int, headers: Any, content: bytes | None) -> bool:
    """Whether an answer is 404 ROUTE_NOT_FOUND (the spec's answer for a path the target does not serve)."""
    body = Answer.of(status, headers, content or b"").body
    return status == 404 and isinstance(body, dict) and body.get("type") == "ROUTE_NOT_FOUND"


def profile_chose_path(entry: Mapping[str, Any] | None) -> bool:
    """Whether the operation's path is the profile's choice (the spec does not show it)."""
    return bool(entry) and entry.get("source") == "profile"


def not_served(op_id: str | None, entry: Mapping[str, Any] | None, label: str) -> None:
    """End the test of an operation the target does not serve at the contract's path: a profile mismatch when
    the profile chose that path, a skip ("not implemented by the target") when the spec shows it."""
    if profile_chose_path(entry):
        raise ProfileMismatch(f"operations.{op_id}.path", f"the target has no route {label} (404 ROUTE_NOT_FOUND)")
    pytest.skip(f"not implemented by the target: {label} answers 404 ROUTE_NOT_FOUND")


def _placeholders(path: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", path))


def placed(document: Mapping[str, Any], operations: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` in which every operation whose path the profile chose is marked `x-profile-path`
    and sits at the merged profile's method and path (when they name the same path parameters and nothing else
    is there already)."""
    out = copy.deepcopy(dict(document))
    paths: dict[str, Any] = out.get("paths") or {}
    for path, item in list(paths.items()):
        for method in [m for m in list(item) if m in HTTP_METHODS]:
            entry = operations.get(str(item[method].get("operationId"))) or {}
            if profile_chose_path(entry):
                item[method][PROFILE_PATH] = True
            where, how = str(entry.get("path", path)), str(entry.get("method", method)).lower()
            moved = (where, how) != (path, method) and _placeholders(where) == _placeholders(path)
            if not profile_chose_path(entry) or not moved or how in paths.get(where, {}):
                continue
            there = paths.setdefault(where, {k: v for k, v in item.items() if k == "parameters"})
            there[how] = item.pop(method)
        if not any(m in item for m in HTTP_METHODS):
            del paths[path]
    return out
