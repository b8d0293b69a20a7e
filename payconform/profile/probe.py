"""Probing the profile's routes on a target, read-only and within a small budget of requests.

A read route is probed with a GET (an id that names nothing: ``NOT_FOUND`` still shows the route exists);
a write route with a request that cannot succeed (a JSON array where the route takes an object, and no
Idempotency-Key): the API's
validation or idempotency error shows the route exists, ``ROUTE_NOT_FOUND`` or 405 that it does not. Nothing
is created or moved.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client import Api, Exchange, TargetError
from .findings import DIFFERS, MATCHES, UNKNOWN, Finding, body_of, error_type, shown

MAX_REQUESTS = 20  # what `payconform profile check` may send in all, the document's fetch included
PROBE_ID = "payconform-probe"  # the id a probe fills every path parameter but orgId with: it names nothing
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class Unusable(Exception):
    """The target cannot be probed (it does not answer, or refuses the key): the one cause."""


@dataclass
class Budget:
    """The requests left; ``left_out`` names the probes the budget did not reach."""

    left: int
    left_out: list[str] = field(default_factory=list)


def calls(suites: Path | None = None) -> Counter[str]:
    """How often the suites name each operation (a quoted operation id in their source): the setup operations
    many tests go through are named most."""
    from .. import paths

    root = suites or paths.suites_dir()
    counted: Counter[str] = Counter()
    for path in root.rglob("*.py"):
        counted.update(re.findall(r"[\"'](\w+)[\"']", path.read_text(encoding="utf-8", errors="replace")))
    return counted


def needed(suites: Path | None = None) -> set[str]:
    """The operations the suites call by name."""
    return set(calls(suites))


def plan(profile: Mapping[str, Any], wanted: set[str]) -> list[str]:
    """The profile-chosen routes in the order they are probed: the ones the suites call before the others;
    among them lists, then writes, then reads by id, a read by id last where a write already showed its path.
    A delete route is left out."""
    ops = profile.get("operations") or {}
    chosen = [op_id for op_id, op in ops.items() if isinstance(op, Mapping) and op.get("source") == "profile"
              and str(op.get("method", "GET")).upper() != "DELETE"]  # a delete is never sent, not even as a probe
    written = {str(ops[o].get("path")) for o in chosen if str(ops[o].get("method", "GET")).upper() != "GET"}

    def rank(op_id: str) -> tuple[int, int]:
        op = ops[op_id]
        if str(op.get("method", "GET")).upper() != "GET":
            kind = 1
        elif op.get("page"):
            kind = 0
        else:
            kind = 3 if str(op.get("path")) in written else 2
        return (0 if op_id in wanted else 1, kind)

    return sorted(chosen, key=rank)


class Prober:
    """Sends the probes through one client and turns each answer into a finding."""

    def __init__(self, api: Api, profile: Mapping[str, Any], budget: Budget) -> None:
        self.api = api
        self.profile = profile
        self.budget = budget

    def send(self, op_id: str) -> Exchange | None:
        """``op_id`` sent as a probe (None when the budget is spent); ``Unusable`` when nothing answers."""
        if self.budget.left <= 0:
            self.budget.left_out.append(op_id)
            return None
        self.budget.left -= 1
        op = (self.profile.get("operations") or {})[op_id]
        method = str(op.get("method", "GET")).upper()
        path = _PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1) == "orgId" else PROBE_ID, str(op.get("path")))
        try:
            if method == "GET":
                return self.api.request(method, path, idempotency_key=None, raw=True)
            return self.api.request(method, path, json=[], idempotency_key=None, raw=True)
        except TargetError as exc:
            first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise Unusable(f"the target at {self.api.base_url} does not answer: {first}") from None

    def route(self, op_id: str, ex: Exchange) -> Finding:
        """Does ``ex`` show the profile route of ``op_id`` exists on the target?"""
        op = self.profile["operations"][op_id]
        route = f"{str(op.get('method', 'GET')).upper()} {op.get('path')}"
        kind = error_type(ex)
        if ex.status == 405 or kind == "ROUTE_NOT_FOUND" or (ex.status == 404 and kind is None):
            return Finding(f"operations.{op_id}.path", DIFFERS, f"{route} answered {shown(ex)}: no such route",
                           request_id=ex.request_id)
        if ex.status >= 500 or (ex.status >= 400 and kind is None):
            return Finding(f"operations.{op_id}.path", UNKNOWN, f"{route} answered {shown(ex)}, not the API's "
                           "error body: cannot tell whether the route exists", request_id=ex.request_id)
        return Finding(f"operations.{op_id}.path", MATCHES, f"{route} answers as a route ({shown(ex)})")

    def envelope(self, op_id: str, ex: Exchange) -> Finding | None:
        """Does a list answer keep its items where ``page.items`` says? None when ``ex`` is not a 200."""
        page = self.profile["operations"][op_id].get("page")
        if ex.status != 200 or not isinstance(page, Mapping):
            return None
        entry, body, key = f"operations.{op_id}.page.items", body_of(ex), page.get("items")
        if key is None:
            if isinstance(body, list):
                return Finding(entry, MATCHES, "the answer is a bare array")
            arrays = _arrays(body)
            override = {"operations": {op_id: {"page": {"items": arrays[0]}}}} if len(arrays) == 1 else None
            return Finding(entry, DIFFERS, f"the answer is not a bare array (array properties: {arrays or 'none'})",
                           expected="a bare array", override=override, request_id=ex.request_id)
        if isinstance(body, dict) and isinstance(body.get(key), list):
            return Finding(entry, MATCHES, f"the answer keeps its items in `{key}`")
        if isinstance(body, list):
            override = {"operations": {op_id: {"page": {"items": None, "cursor": None, "cursor_param": None}}}}
            return Finding(entry, DIFFERS, "the answer is a bare array", expected=f"items in `{key}`",
                           override=override, request_id=ex.request_id)
        arrays = _arrays(body)
        override = {"operations": {op_id: {"page": {"items": arrays[0]}}}} if len(arrays) == 1 else None
        return Finding(entry, DIFFERS, f"the answer has no `{key}` array (array properties: "
                       f"{', '.join(arrays) or 'none'})", expected=f"items in `{key}`", override=override,
                       request_id=ex.request_id)


def _arrays(body: Any) -> list[str]:
    return [k for k, v in body.items() if isinstance(v, list)] if isinstance(body, dict) else []
