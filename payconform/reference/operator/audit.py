"""Audit rows for the dashboard actions the operator API stands for.

Audit event row: "One row per audited mutation (... approvals decided, ... keys and webhook endpoints
managed), recorded whether it succeeded or was refused." A dashboard action names its actor by
`actorUserId`. Some handlers write their own success row (keys, approvals: `record`); every refusal is
written here, after the failed action's transaction has rolled back, once the operator token was accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..core.audit import OPERATOR_USER_ID
from ..core.errors import ApiError
from ..core.orgs import get_org
from ..core.requestid import request_id_of

if TYPE_CHECKING:
    from .server import OperatorServer


def record(ref: OperatorServer, request: Request, org_id: str, mode: str, action: str, resource_id: str | None,
           error_type: str | None = None) -> None:
    """One row for a dashboard action, `refused` when `error_type` is given, else `succeeded`."""
    ref.audit.record(org_id=org_id, mode=mode, action=action, resource_id=resource_id,
                     request_id=request_id_of(request), outcome="refused" if error_type else "succeeded",
                     error_type=error_type, actor_user_id=OPERATOR_USER_ID)


@dataclass(frozen=True)
class OperatorAudit:
    action: str
    handler_records_success: bool

    def refused(self, ref: OperatorServer, request: Request, err: ApiError) -> None:
        _record(ref, request, self.action, "refused", err.type, None)

    def succeeded(self, ref: OperatorServer, request: Request, answer: Any) -> None:
        if not self.handler_records_success:
            resource_id = answer.get("id") if isinstance(answer, dict) else None
            _record(ref, request, self.action, "succeeded", None, resource_id)


def _record(ref: OperatorServer, request: Request, action: str, outcome: str, error_type: str | None,
            resource_id: str | None) -> None:
    org_id = request.path_params.get("orgId")
    if org_id is None or get_org(ref.store, org_id) is None:
        return
    path_ids = [v for k, v in request.path_params.items() if k != "orgId"]
    ref.audit.record(org_id=org_id, mode="test", action=action, resource_id=resource_id or next(iter(path_ids), None),
                     request_id=request_id_of(request), outcome=outcome, error_type=error_type,
                     actor_user_id=OPERATOR_USER_ID)


# operator path -> what it audits; True where the handler writes its own success row
AUDITED = {
    "/orgs/{orgId}/keys": OperatorAudit("api_key.create", True),
    "/orgs/{orgId}/keys/{keyId}/revoke": OperatorAudit("api_key.revoke", True),
    "/orgs/{orgId}/keys/{keyId}/rotate": OperatorAudit("api_key.rotate", True),
    "/orgs/{orgId}/signing-keys": OperatorAudit("signing_key.create", True),
    "/orgs/{orgId}/signing-keys/{keyId}/rotate": OperatorAudit("signing_key.rotate", True),
    "/orgs/{orgId}/approvals/{approvalId}/approve": OperatorAudit("payout_approval.approve", True),
    "/orgs/{orgId}/approvals/{approvalId}/reject": OperatorAudit("payout_approval.reject", True),
    "/orgs/{orgId}/webhook-endpoints": OperatorAudit("webhook_endpoint.create", False),
    "/orgs/{orgId}/webhook-endpoints/{endpointId}": OperatorAudit("webhook_endpoint.delete", False),
    "/orgs/{orgId}/webhook-endpoints/{endpointId}/enabled": OperatorAudit("webhook_endpoint.update", False),
    "/orgs/{orgId}/webhook-endpoints/{endpointId}/rotate-secret": OperatorAudit("webhook_endpoint.rotate_secret",
                                                                                False),
}
