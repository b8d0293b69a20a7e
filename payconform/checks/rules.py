"""The spec's cross-cutting rules, written once, for every answer the harness judges.

Each rule is a small function registered with ``@rule(name, requirement, group)``, in the manner of
schemathesis' checks: it reads an ``Answer`` (status, headers, body, and what was sent) and yields the
ways the answer breaks it (a string, or a ``Problem`` naming another requirement). ``payconform.checks.expect``
runs the ``error_body`` group in ``expect_error_body`` / ``expect_error``; the fuzz phase
(``suites/fuzz/checks.py``) registers every rule as a schemathesis check, so both judge by the same text.

Groups: ``error_body`` (an answer that must be the spec's error body), ``error_catalog`` (an error body's
status against the error catalog), ``answer`` (every answer: request id header, JSON media type,
decimal-string money, non-positive amounts refused). The format predicates (``is_decimal_string``,
``is_instant``, ``is_iso8601_date_time``, ``is_utc_instant``, ``media_type``) are the one definition the suites
use too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any, Union

from ..contract import Contract, run_contract

DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")  # Conventions, Money: a decimal string
# Conventions, Instants: ISO 8601 with a time zone designator; the envelope's `createdAt` is UTC.
INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
INSTANT_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$")
# Conventions, Instants, "ISO 8601": a calendar date and a time of day, in the extended or the basic format,
# seconds and their fraction optional, with or without a zone designator (only filters "require a timezone").
# A bare date names a day, not an instant.
ISO_DATE_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}([.,]\d+)?)?|\d{8}T\d{4}(\d{2}([.,]\d+)?)?)"
                           r"(Z|[+-]\d{2}(:?\d{2})?)?$", re.IGNORECASE)
JSON_MEDIA_TYPE = "application/json"  # Conventions, Wire format


@dataclass(frozen=True)
class Problem:
    """One way an answer breaks a rule; ``requirement`` overrides the rule's own."""

    what: str
    requirement: str | None = None


@dataclass(frozen=True)
class Answer:
    """What a rule reads: the answer, and the request's JSON body and operation when the rule needs them."""

    status: int
    headers: Mapping[str, str]  # lower-case names, first value
    content: bytes
    sent: Any = None
    op_id: str | None = None

    @cached_property
    def body(self) -> Any:
        """The parsed JSON body, or None when there is none or it is not JSON."""
        try:
            return json.loads(self.content) if self.content else None
        except (ValueError, UnicodeDecodeError):
            return None

    @property
    def request_id(self) -> str | None:
        return self.headers.get("x-request-id")

    @classmethod
    def of(cls, status: int, headers: Mapping[str, Any], content: bytes, sent: Any = None,
           op_id: str | None = None) -> "Answer":
        """From any header mapping: names lower-cased, a list of values read as its first."""
        first = {}
        for name, value in headers.items():
            if isinstance(value, list):
                value = value[0] if value else None
            if isinstance(value, str):
                first.setdefault(str(name).lower(), value)
        return cls(status, first, content or b"", sent, op_id)


@dataclass
class Context:
    """What the rules know beyond the answer: the run's contract and the contract's money fields."""

    contract: Contract = field(default_factory=run_contract)
    money_fields: frozenset[str] = frozenset()  # property names declared as decimal strings
    amount_fields: Callable[[str], frozenset[str]] = lambda op_id: frozenset()  # amounts an operation sends


RuleFunction = Callable[[Answer, Context], Iterator[Union[str, Problem]]]


@dataclass(frozen=True)
class Rule:
    name: str
    requirement: str
    group: str
    check: RuleFunction


RULES: dict[str, Rule] = {}


def rule(name: str, requirement: str, group: str) -> Callable[[RuleFunction], RuleFunction]:
    """Register a rule function under ``name`` (unique), the requirement it checks and its group."""
    def register(func: RuleFunction) -> RuleFunction:
        if name in RULES:
            raise ValueError(f"rule {name!r} is registered twice")
        RULES[name] = Rule(name, requirement, group, func)
        return func
    return register


def group(name: str) -> list[Rule]:
    """The rules of a group, in registration order."""
    return [r for r in RULES.values() if r.group == name]


def violations(answer: Answer, rules: list[Rule], ctx: Context | None = None) -> list[tuple[str, Problem]]:
    """(requirement, problem) for every way ``answer`` breaks ``rules``."""
    ctx = ctx if ctx is not None else Context()
    out = []
    for r in rules:
        for found in r.check(answer, ctx):
            problem = found if isinstance(found, Problem) else Problem(found)
            out.append((problem.requirement or r.requirement, problem))
    return out


def is_decimal_string(value: Any) -> bool:
    """A JSON string holding a plain decimal number ("150.00", "-3"), never a JSON number."""
    return isinstance(value, str) and DECIMAL.match(value) is not None


def is_instant(value: Any) -> bool:
    """An ISO 8601 instant with a time zone designator."""
    return isinstance(value, str) and INSTANT.match(value) is not None


def is_iso8601_date_time(value: Any) -> bool:
    """An ISO 8601 date and time of day, zone designator optional (what "Instants | ISO 8601" asks of an
    instant the service returns); never a bare date."""
    return isinstance(value, str) and ISO_DATE_TIME.match(value) is not None


def is_utc_instant(value: Any) -> bool:
    """An ISO 8601 instant in UTC (`Z` or `+00:00`)."""
    return isinstance(value, str) and INSTANT_UTC.match(value) is not None


def media_type(headers: Mapping[str, Any]) -> str:
    """The content-type without parameters (`; charset=utf-8` is allowed), lower-cased."""
    value = next((v for k, v in headers.items() if str(k).lower() == "content-type"), None) or ""
    return str(value).split(";", 1)[0].strip().lower()


def _dump(value: Any) -> str:
    return json.dumps(value)


def _error_body(answer: Answer) -> dict | None:
    return answer.body if isinstance(answer.body, dict) else None


# -- error body (Resources > Error body; Errors) ------------------------------------------------------


@rule("failure_is_error_body", "ERRBODY-ALL-FAILURES", "error_body")
def _failure_is_json_object(answer: Answer, ctx: Context) -> Iterator[str]:
    body = answer.body
    if body is None:
        yield "the body is not JSON" if answer.content else "the body is empty"
    elif not isinstance(body, dict):
        yield f"the body is JSON {type(body).__name__}, not an object"


@rule("error_body_shape", "ERRBODY-SHAPE", "error_body")
def _error_body_shape(answer: Answer, ctx: Context) -> Iterator[str]:
    body = _error_body(answer)
    if body is None:
        return
    etype = body.get("type")
    if not isinstance(etype, str):
        yield f"`type` must be a string, got {_dump(etype)}"
    elif ctx.contract.errors and etype not in ctx.contract.errors:
        yield f"`type` {etype!r} is not an error type of the spec"
    status = body.get("status")
    if isinstance(status, bool) or not isinstance(status, int):
        yield f"`status` must be an integer, got {_dump(status)}"
    if not isinstance(body.get("detail"), str):
        yield f"`detail` must be a string, got {_dump(body.get('detail'))}"
    if not isinstance(body.get("requestId"), str):
        yield f"`requestId` must be a string, got {_dump(body.get('requestId'))}"


@rule("error_status_matches", "ERRBODY-STATUS-MATCHES", "error_body")
def _error_status_matches(answer: Answer, ctx: Context) -> Iterator[str]:
    status = (_error_body(answer) or {}).get("status")
    if isinstance(status, int) and not isinstance(status, bool) and status != answer.status:
        yield f"`status` is {status} but the HTTP status is {answer.status}"


@rule("error_request_id_matches", "CONV-REQUEST-ID-BODY", "error_body")
def _error_request_id_matches(answer: Answer, ctx: Context) -> Iterator[str]:
    rid = (_error_body(answer) or {}).get("requestId")
    if not isinstance(rid, str):
        return
    if answer.request_id is None:
        yield "the response has no x-request-id header to match `requestId`"
    elif rid != answer.request_id:
        yield f"`requestId` {rid!r} differs from the x-request-id header {answer.request_id!r}"


@rule("error_no_retryable", "ERRBODY-NO-RETRYABLE", "error_body")
def _error_no_retryable(answer: Answer, ctx: Context) -> Iterator[str]:
    if "retryable" in (_error_body(answer) or {}):
        yield "the body has a `retryable` field; the spec says there is none"


@rule("error_status_in_catalog", "ERRBODY-TYPE-BRANCH", "error_catalog")
def _error_status_in_catalog(answer: Answer, ctx: Context) -> Iterator[Problem]:
    etype = (_error_body(answer) or {}).get("type")
    entry = ctx.contract.errors.get(etype) if isinstance(etype, str) else None
    statuses = (entry or {}).get("statuses") or []
    if statuses and answer.status not in statuses:
        yield Problem(f"{etype} was answered with HTTP {answer.status}; the error table gives "
                      + " or ".join(str(s) for s in statuses), entry.get("requirement"))


# -- every answer (Conventions) -----------------------------------------------------------------------


@rule("request_id_header", "CONV-REQUEST-ID-HEADER", "answer")
def _request_id_header(answer: Answer, ctx: Context) -> Iterator[str]:
    if not (answer.request_id or "").strip():
        yield f"the {answer.status} answer has no x-request-id header"


@rule("json_content_type", "CONV-JSON-CONTENT-TYPE", "answer")
def _json_content_type(answer: Answer, ctx: Context) -> Iterator[str]:
    if answer.content and media_type(answer.headers) != JSON_MEDIA_TYPE:
        yield (f"the {answer.status} answer's content-type is {answer.headers.get('content-type')!r}, "
               f"not {JSON_MEDIA_TYPE}")


def _money_values(value: Any, names: frozenset[str], path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key in names and not isinstance(item, (dict, list)):
                yield where, item
            yield from _money_values(item, names, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _money_values(item, names, f"{path}[{index}]")


@rule("money_decimal_strings", "CONV-MONEY-DECIMAL-STRING", "answer")
def _money_decimal_strings(answer: Answer, ctx: Context) -> Iterator[str]:
    if not 200 <= answer.status < 300:
        return
    bad = [f"{where} = {_dump(item)}" for where, item in _money_values(answer.body, ctx.money_fields)
           if item is not None and not is_decimal_string(item)]
    if bad:
        yield "money fields that are not decimal strings: " + ", ".join(bad)


# amounts a target may take at zero: BAD_REQUEST's causes ("non-positive amount", ...) are examples, and a product
# price has no limit shown, so a free product is a legal reading; a negative one is still refused
MAY_BE_ZERO: dict[str, frozenset[str]] = {"createCheckoutProduct": frozenset({"unitAmount"}),
                                          "updateCheckoutProduct": frozenset({"unitAmount"})}


# decimal strings a request carries that are not an amount moved, so BAD_REQUEST's "non-positive amount" does not
# reach them: `expectDestination` is a drift guard ("Quote moved past `expectDestination`; re-quote."), and what a
# zero or negative guard means (accept any quote, or refused) is not shown
NOT_AN_AMOUNT: dict[str, frozenset[str]] = {"sendPayout": frozenset({"expectDestination"})}


def refused_amount(op_id: str, name: str, value: Any) -> bool:
    """Whether `value` sent as the amount `name` of `op_id` must be refused: negative, or zero where zero is not
    a legal price (`MAY_BE_ZERO`); never for a field that is not an amount moved (`NOT_AN_AMOUNT`)."""
    if not is_decimal_string(value) or name in NOT_AN_AMOUNT.get(op_id, frozenset()):
        return False
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return False
    return amount < 0 or (amount == 0 and name not in MAY_BE_ZERO.get(op_id, frozenset()))


@rule("non_positive_amount_refused", "ERR-BAD-REQUEST", "answer")
def _non_positive_amount_refused(answer: Answer, ctx: Context) -> Iterator[str]:
    if not 200 <= answer.status < 300 or not isinstance(answer.sent, dict):
        return
    op_id = answer.op_id or ""
    sent = {name: answer.sent[name] for name in ctx.amount_fields(op_id)
            if refused_amount(op_id, name, answer.sent.get(name))}
    if sent:
        entry = (ctx.contract.profile.get("operations") or {}).get(op_id) or {}
        yield (f"a non-positive amount was accepted with {answer.status}: "
               + ", ".join(f"{k}={v!r}" for k, v in sent.items())
               + (f" (profile entry `operations.{op_id}`: {entry.get('why')})" if entry.get("source") == "profile" else ""))
