"""The HTTP layer under the app: uvicorn's h11 protocol, answering a request it cannot even parse (a broken
`Content-Length`, an illegal header line) with the spec's error body and an `x-request-id` instead of
uvicorn's plain-text 400. Conventions: every response carries `x-request-id`; Errors: all failures share
the error body. The fuzz phase sends such requests (an empty `content-length` header, for one).
"""

from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import ids
from .errors import ApiError, error_body

DETAIL = "The request is not valid HTTP/1.1 and could not be read."


class ErrorBodyH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        request_id = ids.request_id()
        err = ApiError("VALIDATION_ERROR", DETAIL, errors=[{"field": "request", "reason": "malformed HTTP"}])
        body = json.dumps(error_body(err, request_id), separators=(",", ":")).encode()
        headers = [(b"content-type", b"application/json"), (b"x-request-id", request_id.encode()),
                   (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers), h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
