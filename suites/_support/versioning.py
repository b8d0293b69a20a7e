"""What the contract marks as added by the Versioning part (`x-versioning-added`), and checks of answers
against it.

Rules 6 and 7 name fields and enum values; the spec gives their types only through the contract, so the
JSON type of each is the contract's. Unknown enum values are tolerated (Versioning rule 2: additions are
safe to ignore), so an enum-valued field is checked for its type, never for membership.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from payconform.contract import Contract

DOCUMENTS = ("payouts", "checkout")
METHODS = ("get", "put", "post", "patch", "delete")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
MARK = "x-versioning-added"
DOC_URI = "urn:payconform:contract"

_formats = FormatChecker(formats=())


@_formats.checks("date-time", raises=ValueError)
def _instant(value: object) -> bool:
    return not isinstance(value, str) or datetime.fromisoformat(value) is not None


def added_operations(contract: Contract) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(operationId, METHOD, path, operation) of every operation marked as added (rule 8), in document order."""
    for doc in DOCUMENTS:
        for path, item in (contract.openapi(doc).get("paths") or {}).items():
            for method in METHODS:
                op = (item or {}).get(method)
                if isinstance(op, dict) and op.get(MARK) == "operation":
                    yield op["operationId"], method.upper(), path, op


def probe_path(path: str, probe: str) -> str:
    """The contract path with every id but `{orgId}` replaced by ``probe`` (an id no resource has)."""
    return PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1) == "orgId" else probe, path)


def documented(op: dict[str, Any], status: int) -> bool:
    """Whether the contract lists ``status`` (or its class, `4XX`) among the operation's responses."""
    responses = {str(code).upper() for code in op.get("responses") or {}}
    return str(status) in responses or f"{status // 100}XX" in responses


def type_problems(contract: Contract, schema_name: str, obj: Any, kinds: tuple[str, ...] = ("field",)) -> list[str]:
    """For each property of ``schema_name`` marked with one of ``kinds`` that ``obj`` carries: what is wrong
    with its JSON type (or instant format), per the contract. Empty when all are right or none is present."""
    doc = next(contract.openapi(d) for d in DOCUMENTS
               if schema_name in ((contract.openapi(d).get("components") or {}).get("schemas") or {}))
    registry = Registry().with_resource(DOC_URI, Resource.from_contents(doc, default_specification=DRAFT202012))
    properties = doc["components"]["schemas"][schema_name].get("properties") or {}
    problems = []
    for name, schema in properties.items():
        if not isinstance(schema, dict) or schema.get(MARK) not in kinds or not isinstance(obj, dict) or name not in obj:
            continue
        schema = _anchored({k: v for k, v in schema.items() if k not in ("enum", "const")})
        errors = list(Draft202012Validator(schema, registry=registry, format_checker=_formats).iter_errors(obj[name]))
        if errors:
            problems.append(f"`{name}` is {obj[name]!r}: {errors[0].message} (contract {schema_name}.{name})")
    return problems


def _anchored(node: Any) -> Any:
    """A copy of a schema whose local `$ref`s point into the registered contract document."""
    if isinstance(node, dict):
        return {k: (DOC_URI + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else _anchored(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_anchored(v) for v in node]
    return node
