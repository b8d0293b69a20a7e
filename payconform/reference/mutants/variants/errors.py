"""Tolerated variants of the Errors part: the wording of `detail`.

The whole suite must pass under each of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.responses import Outgoing
from ..registry import variant

if TYPE_CHECKING:
    from ...reference import Reference


@variant("detail-wording", doc="Every error `detail` is worded differently (wording is not stable, the type is).")
def detail_wording(ref: Reference) -> None:
    def reword(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and isinstance(out.body.get("detail"), str):
            out.body["detail"] = f"Request not completed ({out.body.get('type')}). {out.body['detail'].upper()}"

    ref.response_filters.append(reword)
