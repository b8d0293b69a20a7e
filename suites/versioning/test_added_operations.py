"""Versioning rule 8: the operations the changelog lists as added are served.

Each operation the contract marks `x-versioning-added: operation` must be served: an answer the run's other
tests already got from it in this worker (a success the contract documents, at its contract path:
`versioning.SEEN`) shows that; an operation without one is called once at its contract path with ids no
resource has (and an empty JSON body for writes), so nothing is created or changed on any target. The route
must exist - not 404 `ROUTE_NOT_FOUND` ("No route matches") - and the answer be one the contract documents for
that operation (a 404 for the unknown id, a 400 for the empty body, a 200 for a list).
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect

from .._support.controls import expect_key_accepted
from .._support.versioning import SEEN, added_operations, documented, probe_path

# checked on the answers the run's other tests got (`versioning.SEEN`): after them, it sends least
pytestmark = pytest.mark.late


@pytest.mark.req("VER-ADDED-OPERATIONS")
@pytest.mark.needs("api_key")
def test_added_operations_are_served(api: Api, contract: Contract, unique) -> None:
    """Every added operation answers at its contract path with a status the contract documents for it."""
    expect_key_accepted(api, "the added operations: a refused key's 401 says nothing of a route")
    added = list(added_operations(contract))
    expect(len(added) >= 20, f"the contract marks {len(added)} operations as added; Versioning rule 8 names 20")
    for op_id, method, path, op in added:
        body = {"json": {}} if method in ("POST", "PUT", "PATCH") else {}
        ex = SEEN.success(op_id) or api.request(method, probe_path(path, unique("missing")), **body)
        error_type = ex.json.get("type") if ex.status >= 400 and isinstance(ex.json, dict) else None
        expect(error_type != "ROUTE_NOT_FOUND", f"{op_id} ({method} {path}) is not served: 404 ROUTE_NOT_FOUND", ex)
        expect(documented(op, ex.status), f"{op_id} answered {ex.status}, a status its contract does not list", ex)
