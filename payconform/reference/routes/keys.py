"""`POST /organizations/{orgId}/api-keys/{apiKeyId}/rotate` (Endpoints > Key rotation).

"signed-in dashboard session only; an API key cannot call it": the reference has no dashboard session on
its API, so every call is refused with 403 FORBIDDEN after the usual key and organization checks, and the
refusal is audited. The dashboard's rotation is the operator's (`operator/keys.py`).
"""

from __future__ import annotations

from ..core.errors import ApiError
from ..core.operation import Call, Operation, Reply


def rotate_api_key(call: Call) -> Reply:
    raise ApiError("FORBIDDEN", "Key rotation needs a signed-in dashboard session; an API key cannot rotate keys.")


OPERATIONS = [
    Operation("rotateApiKey", "POST", "/organizations/{orgId}/api-keys/{apiKeyId}/rotate", rotate_api_key,
              audit="api_key.rotate"),
]
