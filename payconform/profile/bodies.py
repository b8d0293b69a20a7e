"""Request body field names: the profile's body against a deployment's request schema, and the renames sent.

An operation's ``body_fields`` maps a field of the profile's body (a dotted path, ``[]`` for the items of
an array: ``items[].sourceAmount``) to the name the deployment gives it. The suites keep building bodies
with the profile's names; the client renames them as it sends (``rename``), so a test reads the same
whatever the deployment calls a field. Only an unambiguous counterpart is mapped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import schema as _schema

_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _words(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(name)}


def _normal(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def match_fields(document: Mapping[str, Any], body: Mapping[str, Any], request: Any,
                 prefix: str = "") -> tuple[dict[str, str], list[str]]:
    """(renames: profile path -> the document's name, profile paths without an unambiguous counterpart)."""
    props = _schema.properties(document, request)
    if not props:
        return {}, []
    pairs, unmatched = _pair(list(map(str, body)), props, _schema.resolve(document, request).get("required") or [])
    renames = {f"{prefix}{ours}": theirs for ours, theirs in pairs.items() if ours != theirs}
    missing = [f"{prefix}{name}" for name in unmatched]
    for ours, theirs in pairs.items():
        value, sub = body[ours], props[theirs]
        if isinstance(value, Mapping) and _schema.kind(document, sub) == "object":
            more, lost = match_fields(document, value, sub, f"{prefix}{ours}.")
        elif (isinstance(value, list) and value and isinstance(value[0], Mapping)
              and _schema.kind(document, sub) == "array"):
            more, lost = match_fields(document, value[0], _schema.resolve(document, sub).get("items"),
                                      f"{prefix}{ours}[].")
        else:
            continue
        renames.update(more)
        missing += lost
    return renames, missing


def _pair(ours: list[str], props: Mapping[str, Any], required: list[str]) -> tuple[dict[str, str], list[str]]:
    """Pair the profile's names with the document's: the same name, the same name but for case and
    separators, then the one counterpart sharing the most words (each the other's only best), then a last
    field left on both sides among the required properties."""
    theirs = [str(p) for p in props]
    pairs = {n: n for n in ours if n in theirs}
    for name in ours:
        if name not in pairs:
            same = [t for t in theirs if _normal(t) == _normal(name) and t not in pairs.values()]
            if len(same) == 1:
                pairs[name] = same[0]
    left = [n for n in ours if n not in pairs]
    free = [t for t in theirs if t not in pairs.values()]

    def best(name: str, among: list[str]) -> str | None:
        scored = [(len(_words(name) & _words(other)), other) for other in among]
        top = max((s for s, _ in scored), default=0)
        winners = [other for s, other in scored if s == top]
        return winners[0] if top and len(winners) == 1 else None

    for name in list(left):
        candidate = best(name, free)
        if candidate is not None and best(candidate, left) == name:
            pairs[name] = candidate
            left.remove(name)
            free.remove(candidate)
    free_required = [t for t in free if t in required]
    if len(left) == 1 and len(free_required) == 1:
        pairs[left.pop()] = free_required[0]
    return pairs, left


def rename(body: Any, renames: Mapping[str, str] | None) -> Any:
    """``body`` with the fields ``renames`` names (profile path -> the deployment's name) renamed; the deepest
    first, so a parent is still found by the profile's name. The caller's body is not changed."""
    if not renames or not isinstance(body, (Mapping, list)):
        return body
    out = _copy(body)
    for path in sorted(renames, key=lambda p: p.count(".") + p.count("[]"), reverse=True):
        *parents, last = path.split(".")
        for holder in _holders(out, parents):
            if isinstance(holder, dict) and last in holder:
                holder[str(renames[path])] = holder.pop(last)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _holders(node: Any, parents: list[str]) -> list[Any]:
    """The objects a dotted path's parents lead to (``name[]`` fans out over an array's items)."""
    nodes = [node]
    for part in parents:
        many = part.endswith("[]")
        key = part.removesuffix("[]")
        step = [n.get(key) for n in nodes if isinstance(n, dict)]
        nodes = [item for s in step if isinstance(s, list) for item in s] if many else step
    return nodes
