"""The last step of every answer: an Outgoing value, passed through the response filters, as JSON bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import Response


@dataclass
class Outgoing:
    """A response about to be sent. Response filters (mutants, variants) may change any field."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    is_error: bool = False
    request_id: str = ""


def to_response(out: Outgoing) -> Response:
    content = json.dumps(out.body, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(content, status_code=out.status, headers=out.headers, media_type="application/json")
