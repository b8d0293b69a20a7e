"""What every API call reads of its request before any rule applies: the client's address and the raw body.

Kept apart from the pipeline because Mode B (`signing.py`) reads them too, before the pipeline has a caller.
"""

from __future__ import annotations

from starlette.requests import Request

from .errors import ApiError


def client_host(request: Request) -> str | None:
    return request.client.host if request.client else None


MAX_BODY = 1 << 20


async def read_body(request: Request) -> bytes:
    """The raw body, refused above 1 MiB so that one request cannot exhaust memory.

    Read once and kept on the request: a signed request's body is read to verify its signature before the
    handler reads it again.
    """
    cached = getattr(request.state, "raw_body", None)
    if cached is not None:
        return cached
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError("VALIDATION_ERROR", "The body is larger than 1 MiB.",
                           errors=[{"field": "body", "reason": "larger than 1 MiB"}])
    request.state.raw_body = body
    return body
