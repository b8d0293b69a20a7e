"""Resources, Error body, and Errors: "All failures share the error body."

Each sample refusal (401, 403, 404 for an id and for a route, 400 validation and idempotency, 409) is
checked field by field: `type` a string from the catalog and the documented one for the situation,
`status` an integer equal to the HTTP status, `detail` a string (wording is never compared),
`requestId` a string, `resolution` a string when present, and no `retryable`. Extra fields are allowed.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_error

from .._support.answers import names_field
from .._support.samples import REFUSALS, Sample
from .._support.types import Unique


@pytest.mark.req("ERRBODY-SHAPE", "ERRBODY-TYPE-BRANCH", "ERRBODY-STATUS-MATCHES", "ERRBODY-RESOLUTION",
                 "ERRBODY-NO-RETRYABLE", "ERRBODY-ALL-FAILURES")
@pytest.mark.parametrize("sample", REFUSALS, ids=str)
def test_error_body_fields(api: Api, contract: Contract, unique: Unique, sample: Sample) -> None:
    """The refusal is the spec's error body with the documented `type` (``expect_error`` checks the fields)."""
    ex = sample.answer(api, contract, unique)
    body = expect_error(ex, sample.status, sample.type)
    expect(isinstance(body.get("resolution", ""), str),
           f"`resolution` is {body.get('resolution')!r}, not a string", ex)


# Validation failures the spec says name the parameter in `errors` (Endpoints, balance transactions):
# "an unknown filter value or a repeated parameter is `400 VALIDATION_ERROR` naming it in `errors`".
VALIDATION_FAILURES = [
    pytest.param("type", [("type", "no-such-type")], id="unknown-filter-value"),
    pytest.param("currency", [("currency", "USD"), ("currency", "EUR")], id="repeated-parameter"),
]


@pytest.mark.smoke(ids=["unknown-filter-value"])
@pytest.mark.req("ERRBODY-ERRORS-FIELDS", "ERR-VALIDATION-ERROR")
@pytest.mark.parametrize(("field", "params"), VALIDATION_FAILURES)
def test_validation_error_names_the_failed_field(api: Api, field: str, params: list[tuple[str, str]]) -> None:
    """`errors` is an array with an entry naming the parameter that failed."""
    ex = api.op("listBalanceTransactions", params=params)
    body = expect_error(ex, 400, "VALIDATION_ERROR")
    expect(isinstance(body.get("errors"), list), f"`errors` is {body.get('errors')!r}, not an array", ex)
    expect(names_field(body["errors"], field), f"no entry of `errors` names `{field}`", ex)
