"""Tolerated variants of the Versioning part: additions a newer version may make.

The whole suite must pass under each of them.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...core.responses import Outgoing
from ..registry import variant

if TYPE_CHECKING:
    from ...reference import Reference


EXTENSION = {"note": "vendor extension; additions are backwards compatible and safe to ignore"}


UNKNOWN_EVENT_TYPE = "vendor_extension.noted"  # not one of the 22: receivers ignore unrecognized types


def _extend(value: Any) -> Any:
    if isinstance(value, dict):
        extended = {k: _extend(v) for k, v in value.items()}
        extended["x_vendor_extension"] = dict(EXTENSION)
        return extended
    if isinstance(value, list):
        return [_extend(v) for v in value]
    return value


@variant("extra-fields",
         doc="Every JSON object in every response body, error bodies included, gains an unknown field; every event "
             "is followed by one of an unknown type, in the feed and to every endpoint (Versioning rule 2).")
def extra_fields(ref: Reference) -> None:
    def extend(out: Outgoing) -> None:
        out.body = _extend(out.body)

    ref.response_filters.append(extend)
    record = ref.events.record

    def record_with_unknown(org_id: str, mode: str, type_: str, data: dict[str, Any], now: datetime) -> str:
        event_id = record(org_id, mode, type_, data, now)
        record(org_id, mode, UNKNOWN_EVENT_TYPE, {**EXTENSION, "after": event_id}, now)
        return event_id

    ref.events.record = record_with_unknown  # type: ignore[method-assign]
