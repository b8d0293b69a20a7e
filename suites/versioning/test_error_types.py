"""Versioning rule 4: error `type` values are stable across versions - clients branch on them - so a target
answers only the types the spec's error tables name (contract/catalog/errors.yaml). HTTP status and wording
are not stable and are not looked at here.

The refusals are the conventions suite's samples (one request each, ending in a documented refusal); one
that needs what the target lacks (a second organization) is left out.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_error_body

from .._support.samples import REFUSALS
from .._support.types import Unique


@pytest.mark.req("VER-ERROR-TYPE-STABLE")
@pytest.mark.needs("api_key")
def test_error_types_are_the_spec_types(api: Api, contract: Contract, unique: Unique) -> None:
    """Each sample refusal's `type` is an error type of the spec's tables, never one of the target's own."""
    for sample in REFUSALS:
        try:
            ex = sample.answer(api, contract, unique)
        except pytest.skip.Exception:
            continue
        body = expect_error_body(ex)
        expect(body.get("type") in contract.errors,
               f"{sample}: `type` {body.get('type')!r} is not an error type of the spec (expected {sample.type})", ex)
