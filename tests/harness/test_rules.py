"""payconform.checks.rules: the registry, and each rule judging answers the same way for expect and for the fuzz checks."""

from __future__ import annotations

import json

import pytest

from payconform.checks import rules
from payconform.contract import Contract

CONTRACT = Contract(errors={"VALIDATION_ERROR": {"type": "VALIDATION_ERROR", "statuses": [400],
                                                 "requirement": "ERR-VALIDATION-ERROR"}})


def answer(status: int, body, request_id: str | None = "rid-1", sent=None, op_id=None,
           content_type: str = "application/json") -> rules.Answer:
    headers = {"X-Request-Id": [request_id]} if request_id else {}
    headers["Content-Type"] = [content_type]
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return rules.Answer.of(status, headers, content, sent, op_id)


def found(a: rules.Answer, group: str, **ctx) -> list[tuple[str, str]]:
    context = rules.Context(CONTRACT, **ctx)
    return [(rid, p.what) for rid, p in rules.violations(a, rules.group(group), context)]


def err(status=400, type_="VALIDATION_ERROR", rid="rid-1", **extra) -> dict:
    return {"type": type_, "status": status, "detail": "nope", "requestId": rid, **extra}


def test_every_rule_is_registered_once_with_a_known_requirement() -> None:
    assert len(rules.RULES) == len({r.name for r in rules.RULES.values()}) >= 9
    assert {r.group for r in rules.RULES.values()} == {"error_body", "error_catalog", "answer"}
    from payconform.contract import run_contract
    assert {r.requirement for r in rules.RULES.values()} <= set(run_contract().requirements)
    with pytest.raises(ValueError, match="twice"):
        rules.rule("request_id_header", "CONV-REQUEST-ID-HEADER", "answer")(lambda a, c: iter(()))


def test_a_conforming_error_body_breaks_no_rule() -> None:
    assert found(answer(400, err()), "error_body") == [] and found(answer(400, err()), "error_catalog") == []


@pytest.mark.parametrize("body, requirement, text", [
    (b"<html>", "ERRBODY-ALL-FAILURES", "not JSON"),
    ([1], "ERRBODY-ALL-FAILURES", "JSON list, not an object"),
    (err(type_=5), "ERRBODY-SHAPE", "`type` must be a string"),
    (err(type_="NOPE"), "ERRBODY-SHAPE", "not an error type of the spec"),
    (err(status=409), "ERRBODY-STATUS-MATCHES", "`status` is 409 but the HTTP status is 400"),
    (err(rid="other"), "CONV-REQUEST-ID-BODY", "differs from the x-request-id header"),
    (err(retryable=False), "ERRBODY-NO-RETRYABLE", "`retryable`"),
])
def test_error_body_rules(body, requirement: str, text: str) -> None:
    problems = found(answer(400, body), "error_body")
    assert any(rid == requirement and text in what for rid, what in problems), problems


def test_catalog_status_names_the_types_requirement() -> None:
    assert found(answer(409, err(status=409)), "error_catalog") == [
        ("ERR-VALIDATION-ERROR", "VALIDATION_ERROR was answered with HTTP 409; the error table gives 400")]


def test_answer_rules() -> None:
    assert found(answer(200, {}, request_id=None), "answer") == [
        ("CONV-REQUEST-ID-HEADER", "the 200 answer has no x-request-id header")]
    money = found(answer(201, {"items": [{"amount": 10.5}, {"amount": "1.00"}]}), "answer",
                  money_fields=frozenset({"amount"}))
    assert money == [("CONV-MONEY-DECIMAL-STRING", "money fields that are not decimal strings: items[0].amount = 10.5")]
    amounts = dict(amount_fields=lambda op_id: frozenset({"unitAmount"}) if op_id == "createProduct" else frozenset())
    accepted = answer(201, {}, sent={"unitAmount": "-1.00"}, op_id="createProduct")
    assert [rid for rid, _ in found(accepted, "answer", **amounts)] == ["ERR-BAD-REQUEST"]
    refused = answer(400, err(), sent={"unitAmount": "-1.00"}, op_id="createProduct")
    assert found(refused, "answer", **amounts) == []


def test_a_zero_price_may_be_taken_a_negative_one_not() -> None:
    """`rules.MAY_BE_ZERO`: a product priced 0 is a legal reading; below zero, and zero elsewhere, are refused."""
    amounts = dict(amount_fields=lambda op_id: frozenset({"unitAmount", "amount"}))
    free = answer(201, {}, sent={"unitAmount": "0.00"}, op_id="createCheckoutProduct")
    assert found(free, "answer", **amounts) == []
    for sent, op_id in (({"unitAmount": "-0.01"}, "createCheckoutProduct"), ({"amount": "0"}, "fundSandbox")):
        assert [rid for rid, _ in found(answer(201, {}, sent=sent, op_id=op_id), "answer", **amounts)] == [
            "ERR-BAD-REQUEST"]


def test_a_drift_guard_is_not_an_amount() -> None:
    """`rules.NOT_AN_AMOUNT`: sendPayout's `expectDestination` guards drift; a zero or negative one may be taken."""
    amounts = dict(amount_fields=lambda op_id: frozenset({"expectDestination"}))
    for guard in ("0", "0.00", "-1.00"):
        taken = answer(201, {}, sent={"expectDestination": guard}, op_id="sendPayout")
        assert found(taken, "answer", **amounts) == []
    other = answer(201, {}, sent={"expectDestination": "0"}, op_id="createPayout")
    assert [rid for rid, _ in found(other, "answer", **amounts)] == ["ERR-BAD-REQUEST"]


def test_a_body_is_json_with_any_parameters() -> None:
    assert found(answer(200, {}, content_type="application/json; charset=utf-8"), "answer") == []
    assert found(answer(404, err(), content_type="text/plain"), "answer") == [
        ("CONV-JSON-CONTENT-TYPE", "the 404 answer's content-type is 'text/plain', not application/json")]
    assert found(rules.Answer.of(204, {"x-request-id": "r"}, b""), "answer") == []  # no body, no media type
