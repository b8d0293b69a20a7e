"""Reading JSON answers whose inner shape the spec does not show: every scalar, a named member, a null member
left out, an `errors` entry naming a field, and "carries at least this"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from payconform.suite import Exchange, ProfileMismatch, expect, run_contract

from .profile import require_named, unshown_entry

# An API key on a dashboard-session-only route: refused, its status not shown (unauthorized, forbidden, or no such
# route or method for a key)
DASHBOARD_REFUSALS = frozenset({401, 403, 404, 405})


def scalars(obj: Any) -> Iterator[str]:
    """Every string or number inside a JSON value, as text (for "does the answer carry X" checks)."""
    if isinstance(obj, dict):
        for v in obj.values():
            yield from scalars(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from scalars(v)
    elif isinstance(obj, (str, int, float)) and not isinstance(obj, bool):
        yield str(obj)


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) for every scalar inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def member(ex: Exchange, *path: str | int) -> Any:
    """The value at ``path`` in the exchange's JSON body; a failure naming the path when it is missing.

    Where the spec does not show the answer of the exchange's operation, the first step must be a field the
    profile entry names (else ``NotNamed``: the test demands what nothing describes); a success answer without
    a field only the profile names (its `response.fields`, its list envelope) is a ``ProfileMismatch`` of that
    entry (the deployment shaped its answer otherwise), and any other absence is a failure naming the entry."""
    contract = run_contract()
    op_id = getattr(ex, "op_id", None)
    unshown = op_id in contract.unshown_answers()
    if unshown and path and isinstance(path[0], str):
        require_named(contract, op_id, path[0])
    source = f" ({unshown_entry(contract, str(op_id))})" if unshown else ""
    value: Any = ex.json
    for depth, step in enumerate(path):
        here = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path[: depth + 1]).lstrip(".")
        present = (isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value)) or (
            isinstance(step, str) and isinstance(value, dict) and step in value)
        entry = _profile_entry(contract, str(op_id), step) if unshown and depth == 0 else None
        if not present and entry is not None and 200 <= ex.status < 300:
            keys = sorted(value)[:12] if isinstance(value, dict) else type(value).__name__
            raise ProfileMismatch(entry, f"the {op_id} answer has no `{here}` (it carries {keys})",
                                  expected=f"the answer carries `{here}`", exchange=ex)
        expect(present, f"the answer has no `{here}`{source}", ex)
        value = value[step]
    return value


def _profile_entry(contract: Any, op_id: str, name: Any) -> str | None:
    """The profile entry that alone names ``name`` in ``op_id``'s unshown answer: its `response.fields` or its
    list envelope (`page.items`, ...); None for a property of a `response.shape`, which a spec component
    requires, so its absence stays a failure."""
    op = contract.operation(op_id)
    if name in (op.get("response") or {}).get("fields") or []:
        return f"operations.{op_id}.response.fields"
    page = op.get("page") or {}
    keys = [key for key in ("items", "cursor", "has_more") if page.get(key) == name]
    return f"operations.{op_id}.page.{keys[0]}" if keys else None


def find_member(value: Any, name: str) -> Any:
    """The value of the first member called `name` at any depth (None when there is none): for bodies whose
    shape is not shown, where a named field may sit inside a wrapper (`data.batch.counts`)."""
    if isinstance(value, dict):
        if value.get(name) is not None:
            return value[name]
        value = list(value.values())
    if isinstance(value, list):
        return next((found for item in value if (found := find_member(item, name)) is not None), None)
    return None


def null_or_absent(obj: dict[str, Any], name: str) -> bool:
    """A nullable member is null or left out: serializers that drop null members are as legal as those that
    write them, since the spec says only "nullable" / "null until"."""
    return obj.get(name) is None


def names_field(errors: Any, field: str) -> bool:
    """Whether a body's `errors` array has an entry naming ``field``.

    The spec names the content ("a field name such as `cursor` with a reason") but not the entry's keys,
    so any string of an entry counts when it is the field's name or a path ending in it (`body.unitAmount`).
    """
    if not isinstance(errors, list):
        return False
    path_end = re.compile(rf"(^|[.\[/]){re.escape(field)}\]?$")
    for entry in errors:
        values = entry.values() if isinstance(entry, dict) else [entry]
        if any(isinstance(v, str) and path_end.search(v) for v in values):
            return True
    return False


def contains(whole: Any, part: Any) -> bool:
    """Whether `whole` carries everything `part` does (extra fields in objects tolerated, recursively)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and contains(whole[k], v) for k, v in part.items())
    if isinstance(part, list):
        return isinstance(whole, list) and len(whole) == len(part) and all(map(contains, whole, part))
    return type(whole) is type(part) and whole == part


def by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Rows keyed by their `id`."""
    return {r.get("id"): r for r in rows if isinstance(r, dict)}
