"""What the profile says of an operation the spec does not fully show: its success statuses, its example
body, where a list answer keeps its items, what a test may read of an answer whose body is not shown, and the
payment corridors. A failure on these reads "the target differs from the profile", so they are read in one
place."""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, Contract, Exchange, expect_status, fill, list_items

from .schemas import component


def success(contract: Contract, op_id: str) -> set[int]:
    """The statuses the profile accepts as success for `op_id` (200 or 201 when it names none)."""
    return set(contract.operation(op_id).get("success") or [200, 201])


def example_body(contract: Contract, op_id: str, **values: str) -> Any:
    """The profile's example body of `op_id` with its `{name}` placeholders filled from `values`."""
    return fill(contract.operation(op_id).get("body") or {}, values)


def setup_call(api: Api, contract: Contract, op_id: str, **kw: Any) -> Exchange:
    """Call `op_id` and require one of its success statuses (a setup step, reported with what was answered)."""
    ex = api.op(op_id, **kw)
    expect_status(ex, success(contract, op_id), f"setup: {op_id}")
    return ex


def items(contract: Contract, op_id: str, ex: Exchange) -> list[dict]:
    """The items of a list answer, where the profile's `page.items` says they are."""
    return list_items(contract, op_id, ex)


class NotNamed(LookupError):
    """A suite defect: a test demands a field of an answer the spec does not show, and the profile entry that
    describes the answer does not name it."""


def answer_fields(contract: Contract, op_id: str | None) -> set[str] | None:
    """What the profile names in the answer of ``op_id`` when the spec does not show its body (the entry's
    `response.fields`, the properties of its `response.shape` and the list envelope of its `page`); None when
    the spec shows the body (or the operation is not in the profile)."""
    entry = contract.unshown_answers().get(op_id or "")
    if entry is None:
        return None
    named = {str(f) for f in entry.get("fields") or []}
    if entry.get("shape"):
        named |= set(component(contract, str(entry["shape"]))[1].get("properties") or {})
    page = contract.operation(str(op_id)).get("page") or {}
    return named | {str(page[k]) for k in ("items", "cursor", "has_more") if page.get(k)}


def unshown_entry(contract: Contract, op_id: str) -> str:
    """The profile entry an unshown answer is read by, quoted for a failure message."""
    why = contract.unshown_answers()[op_id].get("why") or ""
    return f"profile `operations.{op_id}.response` (the spec does not show this answer: {why})"


def require_named(contract: Contract, op_id: str | None, name: str) -> None:
    """Raise ``NotNamed`` when ``name`` is demanded of an unshown answer whose profile entry does not name it."""
    named = answer_fields(contract, op_id)
    if named is not None and name not in named:
        raise NotNamed(f"suite defect: a test demands `{name}` of the {op_id} answer, whose body the spec does not "
                       f"show, and {unshown_entry(contract, str(op_id))} names only {sorted(named)}: name the field "
                       "there (saying why) or do not demand it")


def corridors(contract: Contract) -> dict[str, dict]:
    """The profile's payment corridors by name (kind, currency, example account)."""
    return dict(contract.profile.get("corridors") or {})


def corridor_of(contract: Contract, method: dict[str, Any]) -> str:
    """The profile corridor of a method: the one of its currency, else the first of its kind."""
    rows = corridors(contract)
    for key in ("currency", "kind"):
        match = next((name for name, row in rows.items() if row.get(key) == method.get(key)), None)
        if match is not None:
            return match
    return next(iter(rows))
