"""`GET /payment-reasons` (`listPaymentReasons`) and `GET /policy` (`getPolicy`).

Payment reasons: the 18 `PaymentReason` values the spec lists, served as `{data: [...]}` (the profile's
reading of a response the spec does not show; the key is the deployment's envelope choice). Policy: the
organization's features (`developer` when developer tools are on, as the operator set them) and its approval
rules.
"""

from __future__ import annotations

from ..core.errors import ApiError
from ..conventions.paging import page
from ..core.operation import Call, Operation, Reply
from ..core.orgs import get_org
from ..resources.payouts import PAYMENT_REASONS


def list_payment_reasons(call: Call) -> Reply:
    return Reply(200, page(call, sorted(PAYMENT_REASONS)))


def get_policy(call: Call) -> Reply:
    org = get_org(call.ref.store, call.org_id)
    if org is None:
        raise ApiError("NOT_FOUND", "No such organization.")
    threshold, count, window = call.ref.approvals.policy(call.ref.store, call.org_id, call.mode)
    return Reply(200, {
        "features": list(org.features),
        "approvals": {
            "threshold": None if threshold is None else str(threshold),
            "velocityCap": {"count": count, "windowSeconds": window} if count is not None else None,
        },
    })


P = "/payments/organizations/{orgId}"
OPERATIONS = [
    Operation("listPaymentReasons", "GET", P + "/payment-reasons", list_payment_reasons),
    Operation("getPolicy", "GET", P + "/policy", get_policy),
]
