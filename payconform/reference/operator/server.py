"""The server as the operator API sees it: what its routes reach, satisfied by the Reference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response

from ..core.audit import AuditLog
from ..authentication.auth import Auth
from ..core.errors import ApiError
from ..core.faults import Faults
from ..resources.payouts import ApprovedServer
from ..authentication.rotation import Rotation
from ..authentication.signing import Signing
from ..events.webhook_endpoints import WebhookServer


class OperatorConfig(Protocol):
    @property
    def operator_token(self) -> str: ...


class OperatorServer(WebhookServer, ApprovedServer, Protocol):
    """Keys, rotation, audit, faults and the answers' encoding besides the webhook and approval actions."""

    config: OperatorConfig
    auth: Auth
    signing: Signing
    rotation: Rotation
    audit: AuditLog
    faults: Faults
    new_org_id: Callable[[], str]

    def render_error(self, err: ApiError, request_id: str) -> dict[str, Any]: ...

    def respond(self, request: Request, status: int, body: Any, headers: dict[str, str] | None = None,
                *, is_error: bool = False) -> Response: ...

    def error_response(self, request: Request, err: ApiError) -> Response: ...
