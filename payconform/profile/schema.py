"""Reading an OpenAPI document's schemas: ``$ref`` resolution and the properties of an object schema.

A deployment's document describes its bodies with references into ``components`` and with ``allOf``
compositions; the mapping only needs the property names and kinds they end up with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 12  # a reference cycle (a tree node naming itself) ends here instead of recursing forever


def resolve(document: Mapping[str, Any], node: Any, depth: int = 0) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed (local references only) and its ``allOf`` parts merged."""
    if not isinstance(node, Mapping) or depth > MAX_DEPTH:
        return {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        return resolve(document, _pointer(document, ref), depth + 1)
    if isinstance(node.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        props: dict[str, Any] = dict(merged.get("properties") or {})
        for part in node["allOf"]:
            resolved = resolve(document, part, depth + 1)
            props.update(resolved.get("properties") or {})
            merged.setdefault("type", resolved.get("type"))
        merged["properties"] = props
        return merged
    return dict(node)


def _pointer(document: Mapping[str, Any], ref: str) -> Any:
    """The node a local JSON pointer (``#/components/schemas/Name``) names, or None."""
    if not ref.startswith("#/"):
        return None
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def kind(document: Mapping[str, Any], schema: Any) -> str | None:
    """The JSON type of a schema (``object`` when it has properties but names no type)."""
    resolved = resolve(document, schema)
    found = resolved.get("type")
    if isinstance(found, list):  # OpenAPI 3.1: ["string", "null"]
        found = next((t for t in found if t != "null"), None)
    if found is None and resolved.get("properties"):
        return "object"
    return found if isinstance(found, str) else None


def properties(document: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    """The properties of an object schema (empty for anything else)."""
    props = resolve(document, schema).get("properties")
    return dict(props) if isinstance(props, Mapping) else {}


def json_schema(document: Mapping[str, Any], holder: Any) -> Any:
    """The JSON schema of a request body or response (``content`` -> ``application/json`` or ``*+json``)."""
    content = resolve(document, holder).get("content")
    if not isinstance(content, Mapping):
        return None
    for media, body in content.items():
        if media == "application/json" or str(media).endswith("+json"):
            return (body or {}).get("schema") if isinstance(body, Mapping) else None
    return None
