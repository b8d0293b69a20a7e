"""Tolerated variants: behaviour the spec allows. The whole suite must pass under each of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..responses import Outgoing
from . import variant

if TYPE_CHECKING:
    from ..reference import Reference

EXTENSION = {"note": "vendor extension; additions are backwards compatible and safe to ignore"}


def _extend(value: Any) -> Any:
    if isinstance(value, dict):
        extended = {k: _extend(v) for k, v in value.items()}
        extended["x_vendor_extension"] = dict(EXTENSION)
        return extended
    if isinstance(value, list):
        return [_extend(v) for v in value]
    return value


@variant("extra-fields", doc="Every JSON object in every response body, error bodies included, gains an unknown field.")
def _(ref: Reference) -> None:
    def extend(out: Outgoing) -> None:
        out.body = _extend(out.body)

    ref.response_filters.append(extend)


@variant("detail-wording", doc="Every error `detail` is worded differently (wording is not stable, the type is).")
def _(ref: Reference) -> None:
    def reword(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and isinstance(out.body.get("detail"), str):
            out.body["detail"] = f"Request not completed ({out.body.get('type')}). {out.body['detail'].upper()}"

    ref.response_filters.append(reword)
