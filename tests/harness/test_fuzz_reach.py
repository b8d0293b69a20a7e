"""The fuzz suite's bookkeeping of what its cases reached (`suites/fuzz/checks.py` REACH) and its reading of
invalid parameters the spec does not refuse (`suites/fuzz/tolerant.py`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from schemathesis.core.parameters import ParameterLocation

from suites.fuzz.checks import Reach
from suites.fuzz.tolerant import invalid_only_where_tolerated

LIMIT = {"name": "limit", "in": "query", "schema": {"type": "integer"}, "x-range": {"minimum": 1}}
SINCE = {"name": "since", "in": "query", "schema": {"type": "string", "pattern": "Z$"}}
ALLOW = {"name": "X-Allow-Duplicate", "in": "header", "schema": {"type": "string", "enum": ["true"]}}
KEY = {"name": "Idempotency-Key", "in": "header", "required": True, "schema": {"type": "string"}}


def test_every_case_refused_the_key_is_unchecked() -> None:
    reach = Reach()
    for status, type_ in ((401, "UNAUTHORIZED"), (403, "FORBIDDEN"), (401, "UNAUTHORIZED")):
        reach.count(status, type_)
    assert reach.unchecked() == "every case (3) was refused with 401 or 403"


def test_one_case_reaching_the_operation_is_enough() -> None:
    reach = Reach()
    reach.count(401, "UNAUTHORIZED")
    reach.count(400, "VALIDATION_ERROR")
    assert reach.unchecked() is None


def test_a_missing_scope_is_not_a_refused_key() -> None:
    reach = Reach()
    reach.count(403, "INSUFFICIENT_SCOPE")
    assert reach.unchecked() is None
    reach.reset()
    assert reach.unchecked() is None  # nothing answered: no verdict


def _case(query: dict[str, Any], headers: dict[str, Any], *, body_negative: bool = False) -> Any:
    mode = SimpleNamespace(is_negative=True)
    components = {ParameterLocation.BODY: SimpleNamespace(mode=SimpleNamespace(is_negative=body_negative))}
    operation = SimpleNamespace(query=[SimpleNamespace(definition=LIMIT), SimpleNamespace(definition=SINCE)],
                                headers=[SimpleNamespace(definition=ALLOW), SimpleNamespace(definition=KEY)],
                                path_parameters=[])
    meta = SimpleNamespace(generation=SimpleNamespace(mode=mode), components=components)
    return SimpleNamespace(meta=meta, operation=operation, query=query, headers=headers, path_parameters={})


def test_a_non_integer_limit_or_another_allow_duplicate_value_need_not_be_refused() -> None:
    assert invalid_only_where_tolerated(_case({"limit": "abc", "since": "2020Z"}, {"idempotency-key": "k"}))
    assert invalid_only_where_tolerated(_case({}, {"X-Allow-Duplicate": "false", "Idempotency-Key": "k"}))


def test_any_other_invalid_part_must_still_be_refused() -> None:
    assert not invalid_only_where_tolerated(_case({"limit": "abc", "since": "2020"}, {"Idempotency-Key": "k"}))
    assert not invalid_only_where_tolerated(_case({"limit": "abc"}, {}))  # the required key is missing
    assert not invalid_only_where_tolerated(_case({"limit": "abc"}, {"Idempotency-Key": "k"}, body_negative=True))
    assert not invalid_only_where_tolerated(_case({"limit": "5"}, {"Idempotency-Key": "k"}))  # nothing tolerated
