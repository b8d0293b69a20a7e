"""Authentication > Mode A rule 5: "Revocation is immediate."."""

from __future__ import annotations

import pytest

from payconform.suite import Api, expect_error, expect_status


@pytest.mark.req("AUTH-REVOCATION-IMMEDIATE", "AUTH-REVOKED-KEY")
@pytest.mark.needs("operator")
def test_revocation_is_immediate(api: Api, operator) -> None:
    """A key that has just worked answers 401 UNAUTHORIZED on the very next request after its revocation
    (using it first defeats a server that caches a key it has already accepted)."""
    issued = operator.issue_key(api.org_id, mode="test", scopes=["read", "write"])
    expect_status(api.op("getBalance", credential=issued["key"]), 200, "a key issued a moment ago")
    operator.revoke_key(api.org_id, issued["id"])
    expect_error(api.op("getBalance", credential=issued["key"]), 401, "UNAUTHORIZED",
                 "the first request after the key was revoked")
