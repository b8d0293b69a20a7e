"""A record of every API answer as it left the server: one JSON line per answer, for `--exchange-log FILE`.

What a validating proxy in front of the server would see, without a proxy: the operation the router matched
(its operationId; none for a path or method no operation takes), the request's method and path, and the
answer's status, media type and body, after the response filters (mutants and variants included), a gzip
content-coding undone as a client undoes it. The project's tests check these answers of a whole-suite run against
the OpenAPI documents of `contract/`.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import IO, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

OPERATION = "payconform.operation"  # the scope key under which an API route's endpoint leaves its operationId


class ExchangeLog:
    """ASGI middleware appending each answer under ``prefix`` to ``path`` (JSON lines, flushed per answer)."""

    def __init__(self, app: ASGIApp, path: Path, prefix: str) -> None:
        self.app = app
        self.prefix = prefix
        self._out: IO[str] = Path(path).open("a", encoding="utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        answer: dict[str, Any] = {"status": None, "headers": [], "body": b""}

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"], answer["headers"] = message["status"], message.get("headers", [])
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")
            await send(message)

        await self.app(scope, receive, recording)
        self._write(scope, answer)

    def _write(self, scope: Scope, answer: dict[str, Any]) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in answer["headers"]}
        raw: bytes = answer["body"]
        if headers.get("content-encoding", "").strip().lower() == "gzip" and raw:
            raw = gzip.decompress(raw)
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        row = {"operationId": scope.get(OPERATION),
               "method": scope["method"], "path": scope["path"][len(self.prefix):], "status": answer["status"],
               "contentType": headers.get("content-type"), "body": body}
        self._out.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._out.flush()
