"""What the contract marks as added by the Versioning part (`x-versioning-added`), and checks of answers
against it.

Rules 6 and 7 name fields and enum values; the spec gives their types only through the contract, so the
JSON type of each is the contract's. Unknown enum values are tolerated (Versioning rule 2: additions are
safe to ignore), so an enum-valued field is checked for its type, never for membership.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from payconform.contract import Contract

from .schemas import component, problems

PLACEHOLDER = re.compile(r"\{(\w+)\}")
MARK = "x-versioning-added"


def added_operations(contract: Contract) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(operationId, METHOD, path, operation) of every operation marked as added (rule 8), in document order."""
    for _, method, path, op in contract.openapi_operations():
        if op.get(MARK) == "operation":
            yield op["operationId"], method, path, op


def probe_path(path: str, probe: str) -> str:
    """The contract path with every id but `{orgId}` replaced by ``probe`` (an id no resource has)."""
    return PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1) == "orgId" else probe, path)


def documented(op: dict[str, Any], status: int) -> bool:
    """Whether the contract lists ``status`` (or its class, `4XX`) among the operation's responses."""
    responses = {str(code).upper() for code in op.get("responses") or {}}
    return str(status) in responses or f"{status // 100}XX" in responses


def type_problems(contract: Contract, schema_name: str, obj: Any, kinds: tuple[str, ...] = ("field",)) -> list[str]:
    """For each property of ``schema_name`` marked with one of ``kinds`` that ``obj`` carries: what is wrong
    with its JSON type (or instant format), per the contract's tolerant schema. Empty when all are right or
    none is present."""
    _, schema = component(contract, schema_name)
    found = []
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or prop.get(MARK) not in kinds or not isinstance(obj, dict) or name not in obj:
            continue
        wrong = problems(contract, {k: v for k, v in prop.items() if k not in ("enum", "const")}, obj[name])
        if wrong:
            found.append(f"`{name}` {wrong[0]} (contract {schema_name}.{name})")
    return found
