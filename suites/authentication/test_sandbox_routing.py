"""Authentication > Mode A rule 1: "a test key routes to the sandbox of the same organization id".

The live key only reads: data made with the test key in the organization is not visible to the live key of
the same organization id, which is nonetheless accepted for that id. (The other direction would need a
live write, which the suite never makes in a real organization.)
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect_error, expect_status

from .._support.recipients import create_recipient


@pytest.mark.req("AUTH-TEST-KEY-SANDBOX")
@pytest.mark.needs("live_key")
def test_test_key_data_is_sandboxed(api: Api, api_as, contract: Contract, unique) -> None:
    """The live key reads the organization (200) but finds a recipient made with the test key neither by id
    nor by external id (404 NOT_FOUND, not 403: the organization id is the same)."""
    live = api_as("live_key")
    expect_status(live.op("getBalance"), 200, "a read with the live key of the same organization")
    external_id = unique("ext")
    recipient = create_recipient(api, contract, unique, externalId=external_id)
    expect_error(live.op("getBeneficiary", recipientId=recipient["id"]), 404, "NOT_FOUND",
                 "a sandbox recipient read with the live key")
    expect_error(live.op("getBeneficiaryByExternalId", externalId=external_id), 404, "NOT_FOUND",
                 "a sandbox recipient read by external id with the live key")
