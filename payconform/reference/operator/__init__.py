"""The operator API (`/_operator`): what the dashboard and back office do and an API key cannot.

One module per concern: organizations and their clocks (`orgs.py`), API and signing keys (`keys.py`),
approval decisions (`approvals.py`), webhook endpoint actions (`webhooks.py`), the sandbox ledger
(`ledger.py`), injected faults and disputes (`sandbox.py`). How every route runs (token, body, transaction,
dispatching) is `endpoint.py`; the audit rows of dashboard actions are `audit.py`. A health check needs no
token.
"""

from __future__ import annotations

from starlette.routing import Route

from ..reference import OPERATOR_PREFIX, Reference
from . import approvals, keys, ledger, orgs, sandbox, webhooks
from .audit import AUDITED
from .endpoint import guarded, health

ROUTES = [*orgs.ROUTES, *keys.ROUTES, *approvals.ROUTES, *sandbox.ROUTES, *webhooks.ROUTES, *ledger.ROUTES]


def routes(ref: Reference) -> list[Route]:
    """The operator routes of one server, each behind the token."""
    return [
        Route(OPERATOR_PREFIX + "/health", health, methods=["GET"]),
        *(Route(OPERATOR_PREFIX + r.path, guarded(ref, r, AUDITED.get(r.path)), methods=[r.method]) for r in ROUTES),
    ]
