"""Conventions, Wire format: "JSON bodies, `content-type: application/json`." On successes and refusals alike."""

from __future__ import annotations

import pytest

from payconform.suite import JSON_MEDIA_TYPE, Api, Contract, expect, expect_status, media_type

from .._support.samples import SAMPLES, Sample
from .._support.types import Unique


@pytest.mark.req("CONV-JSON-CONTENT-TYPE")
@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_response_is_json(api: Api, contract: Contract, unique: Unique, sample: Sample) -> None:
    """Each sample answer (2xx and 4xx, several routes) has `content-type: application/json` and a JSON body."""
    ex = expect_status(sample.answer(api, contract, unique), sample.status, sample.name)
    expect(media_type(ex.headers) == JSON_MEDIA_TYPE,
           f"content-type is {ex.headers.get('content-type')!r}, not application/json", ex)
    ex.json  # noqa: B018 - fails with the requirement when the body does not parse as JSON
