"""Conventions, Request id: "Every response carries the `x-request-id` header; every error body carries
`requestId` with the same value." Checked on successes and on refusals before and after authentication."""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status

from .._support.samples import REFUSALS, SAMPLES, Sample
from .._support.types import Unique


@pytest.mark.breadth
@pytest.mark.req("CONV-REQUEST-ID-HEADER")
@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_every_response_carries_x_request_id(api: Api, contract: Contract, unique: Unique, sample: Sample) -> None:
    """The header is present and non-empty on 2xx answers and on 401, 403, 404, 400 and 409 refusals."""
    ex = expect_status(sample.answer(api, contract, unique), sample.status, sample.name)
    expect(bool(ex.request_id and ex.request_id.strip()), "the response has no (or an empty) x-request-id header", ex)


@pytest.mark.req("CONV-REQUEST-ID-BODY")
@pytest.mark.parametrize("sample", REFUSALS, ids=str)
def test_error_body_request_id_equals_header(api: Api, contract: Contract, unique: Unique, sample: Sample) -> None:
    """`requestId` in the error body is the x-request-id header's value (``expect_error`` compares them)."""
    expect_error(sample.answer(api, contract, unique), sample.status, sample.type)


@pytest.mark.req("CONV-REQUEST-ID-HEADER")
def test_request_ids_differ_between_requests(api: Api) -> None:
    """A request id names one request: two identical reads get two different ids."""
    first = expect_status(api.op("getBalance"), 200)
    second = expect_status(api.op("getBalance"), 200)
    expect(bool(first.request_id), "the first response has no x-request-id header", first)
    expect(first.request_id != second.request_id,
           f"two requests carry the same x-request-id {first.request_id!r}", second)
