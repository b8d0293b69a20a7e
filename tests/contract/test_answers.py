"""The answers the spec allows are in the OpenAPI documents, in the form tools read (listed per operation, with a
schema), and the judge the pristine run's answers go through (`answers.py`) finds what a validating proxy would."""

from __future__ import annotations

import pytest
import yaml

from payconform.contract import OPENAPI_DOCUMENTS, Contract

from .answers import Documented, describe

CHALLENGE = {"type": "SIGNATURE_CHALLENGE", "requestId": "req_1", "payloadToSign": "key\nPOST\n/p\n\n\n1\nn"}
INTERNAL = {"type": "INTERNAL", "status": 500, "detail": "An unexpected error occurred.", "requestId": "req_1"}


@pytest.fixture(scope="module")
def contract() -> Contract:
    return Contract.load()


@pytest.fixture(scope="module")
def documented(contract: Contract) -> Documented:
    return Documented({name: contract.openapi(name) for name in OPENAPI_DOCUMENTS})


def _operations(contract: Contract):
    for _, _, _, op in contract.openapi_operations():
        yield op["operationId"], op


def test_every_authenticated_operation_lists_the_mode_b_challenge(contract: Contract, documented: Documented) -> None:
    """Authentication > Mode B rule 4: any authenticated operation may first answer 202 SIGNATURE_CHALLENGE."""
    for op_id, op in _operations(contract):
        answer = {"operationId": op_id, "status": 202, "contentType": "application/json", "body": CHALLENGE}
        if op.get("security") == []:
            assert "202" not in op["responses"], f"{op_id} takes no credential: no challenge"
            continue
        assert documented.problem(answer) is None, op_id
        if "$ref" in op["responses"]["202"]:  # else the operation's own 202 (its body or the challenge's)
            assert documented.problem({**answer, "body": {"type": "SIGNATURE_CHALLENGE"}}), f"{op_id}: fields"
        assert "SIGNATURE_CHALLENGE" in op["x-errors"]["202"], op_id


def test_keyed_writes_list_internal(contract: Contract, documented: Documented) -> None:
    """Errors: "`INTERNAL` | 500 | Maybe | As is | Nothing recorded, key released"."""
    for op_id, op in _operations(contract):
        if op["x-idempotency"] == "required":
            answer = {"operationId": op_id, "status": 500, "contentType": "application/json", "body": INTERNAL}
            assert documented.problem(answer) is None, op_id
            assert "INTERNAL" in op["x-errors"]["500"], op_id


def test_what_the_spec_does_not_show_names_its_profile_entry(contract: Contract) -> None:
    """An operation whose path, body, list envelope or answer the profile chose says so, naming the entry."""
    for op_id, op in _operations(contract):
        entry = contract.operation(op_id)
        chosen = [key for key, chose in (
            ("path", entry.get("source") == "profile"),
            ("page", (entry.get("page") or {}).get("source") == "profile"),
            ("response", (entry.get("response") or {}).get("source") == "profile"),
        ) if chose]
        if "body" in entry and "profile" in (entry.get("source"), entry.get("body_source")):
            chosen.append("body")
        elif entry.get("body_source") == "profile":  # no body shown, and the profile sends none
            chosen.append("body_source")
        for key in chosen:
            assert f"`operations.{op_id}.{key}`" in op.get("description", ""), f"{op_id}: {key}"
        if chosen:
            assert "Not shown by the spec" in op["description"], op_id


DOC = yaml.safe_load("""
openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /things/{id}:
    get:
      operationId: getThing
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {type: object, required: [id], properties: {id: {type: string}}}
        4XX: {$ref: '#/components/responses/Error'}
components:
  responses:
    Error:
      description: an error
      content:
        application/json:
          schema: {type: object, required: [type], properties: {type: {type: string}}}
""")


@pytest.mark.parametrize("answer, problem", [
    ({"status": 200, "body": {"id": "t1", "added": 1}}, None),
    ({"status": 404, "body": {"type": "NOT_FOUND"}}, None),  # a status class, through a shared response
    ({"status": 200, "body": {"id": 7}}, "200: body off its schema at id: 7 is not of type 'string'"),
    ({"status": 409, "body": {"detail": "no type"}}, "409: body off its schema at (the body): 'type' is a required"),
    ({"status": 500, "body": {"type": "INTERNAL"}}, "500: status not documented"),
    ({"status": 200, "body": "<html>", "contentType": "text/html"}, "200: text/html not documented"),
    ({"status": 200, "body": None}, None),
])
def test_the_judge_finds_what_a_validating_proxy_would(answer: dict, problem: str | None) -> None:
    found = Documented({"doc": DOC}).problem({"operationId": "getThing", "contentType": "application/json", **answer})
    assert (found is None) if problem is None else (found or "").startswith(problem), found


def test_answers_of_no_operation_are_left_out_and_problems_are_told_per_operation() -> None:
    answers = [{"operationId": None, "status": 404, "body": {"type": "ROUTE_NOT_FOUND"}},
               *[{"operationId": "getThing", "status": 500, "contentType": "application/json", "body": {}}] * 2]
    problems = Documented({"doc": DOC}).judge(answers)
    assert describe(problems) == "- getThing:\n    500: status not documented (2 answers)"
