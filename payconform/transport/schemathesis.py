"""schemathesis' side of the one transport: the fuzz phase's requests go out through ``payconform.transport.sender``.

schemathesis asks a schema for its transport (``schema.transport``) both for the generated cases
(``case.call``) and for the probes its checks send on their own (``ignored_auth``, ...). ``bind`` gives a
loaded schema a transport of ours: it serializes a case as schemathesis' own requests transport does, sends
it through the harness transport (guard, pacing, deadline, body cap, 429 retries, transcript) and hands the
answer back as the ``Response`` schemathesis' checks read. Nothing global is replaced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import requests
from schemathesis.core.transport import Response
from schemathesis.transport import BaseTransport, Serializer
from schemathesis.transport.requests import REQUESTS_TRANSPORT

from .sender import Transport

OperationInfo = Callable[[Any], tuple[str | None, Mapping | None]]  # case -> (operation id, profile entry)


class HarnessTransport(BaseTransport[Any]):
    """A schemathesis transport that sends through a ``payconform.transport.sender.Transport``."""

    def __init__(self, transport: Transport, operation: OperationInfo) -> None:
        super().__init__()
        self.transport = transport
        self._operation = operation

    def serialize_case(self, case: Any, **kwargs: Any) -> dict[str, Any]:
        return REQUESTS_TRANSPORT.serialize_case(case, **kwargs)

    def get_matching_media_types(self, media_type: str) -> Iterator[tuple[str, Serializer]]:
        return REQUESTS_TRANSPORT.get_matching_media_types(media_type)

    def send(self, case: Any, *, session: Any = None, **kwargs: Any) -> Response:
        """Send ``case`` (the transport's deadline stands for schemathesis' timeout settings)."""
        __tracebackhide__ = True  # ``case`` carries the credential header
        data = self.serialize_case(case, **kwargs)
        prepared = requests.Request(
            method=data["method"], url=data["url"], headers=data.get("headers"), params=data.get("params"),
            cookies=data.get("cookies"), data=data.get("data"), json=data.get("json"), files=data.get("files"),
        ).prepare()
        body = prepared.body or b""
        headers = [(k, v) for k, v in prepared.headers.items() if k.lower() != "content-length"]
        op_id, op = self._operation(case)
        ex = self.transport.send(prepared.method or case.method, prepared.url or data["url"], headers=headers,
                                 content=body.encode("utf-8") if isinstance(body, str) else bytes(body),
                                 op=op, op_id=op_id)
        values: dict[str, list[str]] = {}
        for name, value in ex.headers.multi_items():
            values.setdefault(name, []).append(value)
        return Response(status_code=ex.status, headers=values, content=ex.content, request=prepared,
                        elapsed=ex.elapsed, verify=True, message=ex.reason,
                        http_version=ex.http_version.removeprefix("HTTP/"))


def bind(schema: Any, transport: HarnessTransport) -> Any:
    """``schema`` (a loaded schemathesis schema) with ``transport`` as its transport, kept by its clones
    (``include``, ``parametrize``, the state machine): a subclass whose ``transport`` is ours."""
    cls = type(f"Harness{type(schema).__name__}", (type(schema),), {"transport": property(lambda self: transport)})
    return cls(schema.raw_schema, config=schema.config, location=schema.location, app=schema.app,
               hooks=schema.hooks, auth=schema.auth, test_function=schema.test_function,
               filter_set=schema.filter_set)
