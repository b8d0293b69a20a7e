"""Wire format and Errors: a request body that is not JSON is the caller's mistake, answered with an error body.

The spec names no type for it: a field problem is `VALIDATION_ERROR`, a non-field 400 is `BAD_REQUEST`;
both are accepted, with any 4xx. A 5xx would say the server failed on the caller's input.
"""

from __future__ import annotations

import pytest

from payconform.suite import Api, expect, expect_error_body

MALFORMED = [
    pytest.param("createCheckoutProduct", b'{"name": "payconform", "unitAmount": ', id="truncated-json"),
    pytest.param("createBeneficiary", b"name=payconform&type=individual", id="form-encoded"),
]


@pytest.mark.req("CONV-JSON-CONTENT-TYPE", "ERRBODY-ALL-FAILURES")
@pytest.mark.parametrize(("op_id", "content"), MALFORMED)
def test_malformed_json_body_is_a_client_error(api: Api, op_id: str, content: bytes) -> None:
    """A body declared `application/json` that does not parse: 4xx with the error body, never a 5xx."""
    ex = api.op(op_id, content=content, headers={"content-type": "application/json"})
    expect(400 <= ex.status < 500, f"a malformed JSON body answered {ex.status}, not a 4xx", ex)
    body = expect_error_body(ex)
    expect(body["type"] in ("VALIDATION_ERROR", "BAD_REQUEST"),
           f"a malformed JSON body answered type {body['type']!r}, not VALIDATION_ERROR or BAD_REQUEST", ex)
