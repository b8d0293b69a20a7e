"""Request bodies for the stateful walks: the contract's, narrowed to the shape of the profile's example bodies.

A walk only goes somewhere once a create succeeds, and a body generated from the contract's schema rarely
passes a target's validation: the spec does not show most bodies, so the contract leaves their fields
unconstrained rather than invent rules. The walks send valid data only (fuzz.yaml), so narrowing their bodies
holds the target to nothing new; the stateless phase keeps the contract's schemas, and what its negative data
must be refused for stays what the contract states.

A value of the example body is sent as it is. A ``{unique}``-style placeholder becomes a pattern, and as the
request is sent its value is replaced by a fresh one of the same pattern (``refresh``: Hypothesis draws the same
simple strings again and again, and two creates would collide on a name); an ``{N hex digits}`` one becomes a
pattern; one naming something only a test can know (``{destinationAccountId}``) keeps the contract's schema for
that field, or the value a link passes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..placeholders import PLACEHOLDER, fill, fresh_patterns, fresh_values

FRESH_PREFIX = "pcw"
FRESH_PATTERNS = fresh_patterns(FRESH_PREFIX)
HEX_DIGITS = re.compile(r"(\d+) hex digits\b")


def narrow(document: Mapping[str, Any], example_body: Callable[[str], Any]) -> dict:
    """A copy of an OpenAPI document whose JSON request bodies follow ``example_body(operationId)`` (None: the
    contract's body unchanged)."""
    narrowed = copy.deepcopy(dict(document))
    for item in (narrowed.get("paths") or {}).values():
        for op in (item or {}).values():
            if not isinstance(op, dict) or not op.get("operationId"):
                continue
            media = ((op.get("requestBody") or {}).get("content") or {}).get("application/json")
            example = example_body(str(op["operationId"]))
            if isinstance(media, dict) and example is not None:
                media["schema"] = _schema(example, media.get("schema") or {}, narrowed)
    return narrowed


def refresh(body: Any, example: Any) -> Any:
    """``body`` with a fresh value wherever the example body has a ``{unique}``-style placeholder."""
    if isinstance(example, str) and isinstance(body, str):
        names = {m.group(1).strip() for m in PLACEHOLDER.finditer(example)}
        return fill(example, fresh_values(FRESH_PREFIX)) if names and names <= FRESH_PATTERNS.keys() else body
    if isinstance(example, Mapping) and isinstance(body, dict):
        return {k: refresh(v, example.get(k)) for k, v in body.items()}
    if isinstance(example, list) and isinstance(body, list) and example:
        return [refresh(v, example[min(i, len(example) - 1)]) for i, v in enumerate(body)]
    return body


def _schema(example: Any, original: Any, document: Mapping[str, Any]) -> dict:
    """The schema of values shaped like ``example``; ``original`` (the contract's) where it cannot say."""
    if isinstance(example, str):
        return _string(example) or original
    if not _varies(example):
        return {"const": example}
    original = _resolve(original, document)
    if isinstance(example, Mapping):
        properties = original.get("properties") or {} if isinstance(original, Mapping) else {}
        return {"type": "object", "required": list(example), "additionalProperties": False,
                "properties": {k: _schema(v, properties.get(k, {}), document) for k, v in example.items()}}
    item = original.get("items", {}) if isinstance(original, Mapping) else {}
    items = [_schema(v, item, document) for v in example]
    return {"type": "array", "items": items[0] if len(items) == 1 else {"anyOf": items},
            "minItems": len(example), "maxItems": len(example)}


def _string(text: str) -> dict | None:
    """The schema of a string of the example body; None when a placeholder names a value only a test knows."""
    out, at = ["^"], 0
    for match in PLACEHOLDER.finditer(text):
        name = match.group(1).strip()
        hex_digits = HEX_DIGITS.match(name)
        piece = f"[0-9a-f]{{{hex_digits.group(1)}}}" if hex_digits else FRESH_PATTERNS.get(name)
        if piece is None:
            return None
        out += [re.escape(text[at:match.start()]), piece]
        at = match.end()
    if at == 0:
        return {"const": text}
    return {"type": "string", "pattern": "".join([*out, re.escape(text[at:]), "$"])}


def _varies(value: Any) -> bool:
    """Whether a value holds a string that is not sent as it is (drawn from a pattern or the contract's schema)."""
    if isinstance(value, str):
        return "const" not in (_string(value) or {})
    if isinstance(value, Mapping):
        return any(_varies(v) for v in value.values())
    if isinstance(value, list):
        return any(_varies(v) for v in value)
    return False


def _resolve(schema: Any, document: Mapping[str, Any]) -> Any:
    """Follow a local ``$ref`` (``#/components/...``) to the schema it names."""
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
        node: Any = document
        for part in schema["$ref"][2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        schema = node
    return schema
