"""A deployment's OpenAPI document mapped onto the profile's "not shown" operations, by operationId.

The spec names operations such as ``pricePayout`` or ``createCheckoutLink`` without showing their path, method,
body or list envelope; the profile records payconform's choice for each. A deployment's own document shows
its choice: this module turns what it shows into profile overrides (only where it differs from the profile)
and says, one note each, what the document lacks, what it renames and what it leaves ambiguous, so the run
falls back on the profile there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from . import schema as _schema
from .bodies import match_fields

HTTP_METHODS = ("get", "put", "post", "patch", "delete")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_CURSOR = re.compile(r"cursor|^next", re.IGNORECASE)
_CURSOR_PARAM = re.compile(r"cursor|^after$|^starting_?after$|page_?token", re.IGNORECASE)
_HAS_MORE = re.compile(r"^has_?more$", re.IGNORECASE)


@dataclass
class Mapped:
    """What a document told: ``overrides`` (for the target file's ``profile:``) and ``notes`` (one line each:
    what it lacks, renames or leaves open; the profile is used there)."""

    overrides: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def set(self, op_id: str, key: str, value: Any) -> None:
        self.overrides.setdefault("operations", {}).setdefault(op_id, {})[key] = value


@dataclass(frozen=True)
class DocOperation:
    """One operation of the document: its method, its path relative to the target's base URL (None when it is
    not under it), the path as the document writes it, and its operation and path-item objects."""

    method: str
    path: str | None
    shown_path: str
    operation: Mapping[str, Any]
    item: Mapping[str, Any]


def unshown(profile: Mapping[str, Any]) -> list[str]:
    """The operations of the profile the spec does not fully show: a profile-chosen path (``source:
    profile``), body (``body_source: profile``) or list envelope (``page.source: profile``)."""
    out = []
    for op_id, op in (profile.get("operations") or {}).items():
        if not isinstance(op, Mapping):
            continue
        page = op.get("page") if isinstance(op.get("page"), Mapping) else {}
        if "profile" in (op.get("source"), op.get("body_source"), page.get("source")):
            out.append(str(op_id))
    return out


def operations(document: Mapping[str, Any], base_url: str) -> dict[str, DocOperation]:
    """The document's operations by operationId, their paths made relative to ``base_url``'s path (the
    document's first server URL prefixed)."""
    servers = document.get("servers") if isinstance(document.get("servers"), list) else []
    server = servers[0].get("url") if servers and isinstance(servers[0], Mapping) else ""
    server_path = urlsplit(str(server or "")).path.rstrip("/")
    base_path = urlsplit(base_url).path.rstrip("/")
    found: dict[str, DocOperation] = {}
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        full = server_path + "/" + str(path).lstrip("/")
        relative = full[len(base_path):] if full.startswith(base_path + "/") else None
        for method in HTTP_METHODS:
            op = item.get(method)
            if isinstance(op, Mapping) and isinstance(op.get("operationId"), str):
                found[op["operationId"]] = DocOperation(method.upper(), relative, full, op, item)
    return found


def map_document(document: Mapping[str, Any], profile: Mapping[str, Any], base_url: str) -> Mapped:
    """The overrides ``document`` implies for ``profile``'s not-shown operations, and the notes on them."""
    mapped = Mapped()
    if not isinstance(document.get("paths"), Mapping):
        mapped.notes.append("the document has no `paths`: nothing read from it, the profile is used throughout")
        return mapped
    found = operations(document, base_url)
    ops = profile.get("operations") or {}
    for op_id in unshown(profile):
        entry = ops[op_id]
        doc_op = found.get(op_id)
        if doc_op is None:
            mapped.notes.append(f"operations.{op_id}: the document has no operationId {op_id}; the profile's "
                                f"{entry.get('method')} {entry.get('path')} is used")
            continue
        if entry.get("source") == "profile":
            _route(mapped, op_id, entry, doc_op)
        if isinstance(entry.get("body"), Mapping):
            _body(mapped, document, op_id, entry, doc_op)
        if isinstance(entry.get("page"), Mapping) and entry["page"].get("source") == "profile":
            _envelope(mapped, document, op_id, entry, doc_op)
    return mapped


def _route(mapped: Mapped, op_id: str, entry: Mapping[str, Any], doc_op: DocOperation) -> None:
    """The path (placeholders renamed to the profile's, in order) and the method."""
    where = f"operations.{op_id}"
    if doc_op.path is None:
        mapped.notes.append(f"{where}.path: the document's {doc_op.shown_path} is not under the target's base URL; "
                            f"the profile's {entry.get('path')} is used")
    else:
        ours = _PLACEHOLDER.findall(str(entry.get("path") or ""))
        theirs = _PLACEHOLDER.findall(doc_op.path)
        if len(ours) != len(theirs):
            mapped.notes.append(f"{where}.path: the document's {doc_op.path} has {len(theirs)} path parameter(s), the "
                                f"profile's {entry.get('path')} {len(ours)}; the profile's path is used")
        else:
            names = iter(ours)
            path = _PLACEHOLDER.sub(lambda m: "{" + next(names) + "}", doc_op.path)
            renamed = [f"{{{t}}} as {{{o}}}" for t, o in zip(theirs, ours) if t != o]
            if renamed:
                mapped.notes.append(f"{where}.path: the document's path parameter(s) read as the profile's: "
                                    + ", ".join(renamed))
            if path != entry.get("path"):
                mapped.set(op_id, "path", path)
    if doc_op.method != str(entry.get("method") or "GET").upper():
        mapped.set(op_id, "method", doc_op.method)
    _query(mapped, op_id, entry, doc_op)


def _query(mapped: Mapped, op_id: str, entry: Mapping[str, Any], doc_op: DocOperation) -> None:
    """Say which query parameters of the profile the document does not name (the profile's are sent)."""
    query = entry.get("query")
    if not isinstance(query, Mapping):
        return
    names = {str(p.get("name")) for p in _parameters(doc_op) if p.get("in") == "query"}
    missing = sorted(set(map(str, query)) - names)
    if missing:
        mapped.notes.append(f"operations.{op_id}.query: the document names no query parameter {', '.join(missing)} "
                            f"(it names {', '.join(sorted(names)) or 'none'}); the profile's are sent")


def _parameters(doc_op: DocOperation) -> list[Mapping[str, Any]]:
    params = [*(doc_op.item.get("parameters") or []), *(doc_op.operation.get("parameters") or [])]
    return [p for p in params if isinstance(p, Mapping)]


def _body(mapped: Mapped, document: Mapping[str, Any], op_id: str, entry: Mapping[str, Any],
          doc_op: DocOperation) -> None:
    """``body_fields``: the profile body's field names the document's request schema spells otherwise."""
    where = f"operations.{op_id}.body"
    request = _schema.json_schema(document, doc_op.operation.get("requestBody"))
    if request is None:
        mapped.notes.append(f"{where}: the document shows no JSON request body; the profile's body is sent")
        return
    renames, unmatched = match_fields(document, entry["body"], request)
    if renames:
        mapped.set(op_id, "body_fields", renames)
        mapped.notes.append(f"{where}: the document names " + ", ".join(f"{a} as {b}" for a, b in renames.items()))
    if unmatched:
        mapped.notes.append(f"{where}: the document's request body has no unambiguous counterpart of "
                            f"{', '.join(unmatched)}; the profile's name is sent")


def _envelope(mapped: Mapped, document: Mapping[str, Any], op_id: str, entry: Mapping[str, Any],
              doc_op: DocOperation) -> None:
    """``page``: the array property and the cursor property of the list answer, and the cursor parameter."""
    where = f"operations.{op_id}.page"
    page = entry["page"]
    responses = doc_op.operation.get("responses") or {}
    ok = next((responses[c] for c in ("200", 200, "2XX") if c in responses), None)
    answer = _schema.json_schema(document, ok)
    if answer is None:
        mapped.notes.append(f"{where}: the document shows no JSON 200 answer; the profile's envelope is read")
        return
    if _schema.kind(document, answer) == "array":
        if page.get("items") is not None:
            mapped.set(op_id, "page", {"items": None, "cursor": None, "cursor_param": None})
        return
    props = _schema.properties(document, answer)
    arrays = [k for k, v in props.items() if _schema.kind(document, v) == "array"]
    changes: dict[str, Any] = {}
    if page.get("items") in arrays:
        pass
    elif len(arrays) == 1:
        changes["items"] = arrays[0]
    else:
        mapped.notes.append(f"{where}.items: the answer has {len(arrays)} array properties "
                            f"({', '.join(arrays) or 'none'}); the profile's `{page.get('items')}` is read")
    if page.get("cursor") is not None and page["cursor"] not in props:
        cursors = [k for k, v in props.items() if _CURSOR.search(k) and _schema.kind(document, v) != "array"]
        if len(cursors) == 1:
            changes["cursor"] = cursors[0]
        else:
            mapped.notes.append(f"{where}.cursor: the answer has no unambiguous cursor property "
                                f"({', '.join(cursors) or 'none'}); the profile's `{page['cursor']}` is read")
    if page.get("has_more") and page["has_more"] not in props:
        flags = [k for k in props if _HAS_MORE.match(k)]
        if len(flags) == 1:
            changes["has_more"] = flags[0]
    if page.get("cursor_param") and not page.get("cursor_from_item"):
        names = [str(p.get("name")) for p in _parameters(doc_op) if p.get("in") == "query"]
        if page["cursor_param"] not in names:
            params = [n for n in names if _CURSOR_PARAM.search(n)]
            if len(params) == 1:
                changes["cursor_param"] = params[0]
            else:
                mapped.notes.append(f"{where}.cursor_param: the document names no unambiguous cursor parameter "
                                    f"({', '.join(params) or 'none'}); the profile's `{page['cursor_param']}` is sent")
    if changes:
        mapped.set(op_id, "page", changes)
