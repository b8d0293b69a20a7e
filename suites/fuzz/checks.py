"""The spec's cross-cutting rules (``payconform.rules``) as schemathesis checks, run on every fuzzed response.

Registered with ``schemathesis.check`` when this module is imported (by ``conftest.py``), one check
``payconform_<rule name>`` per rule. A failure raises ``SpecViolation(requirement, what)`` naming the one
requirement it breaks:

- every response carries ``x-request-id`` (Conventions, Request id), and a body is ``application/json``
  (Conventions, Wire format);
- every failure is the error body: a JSON object (Errors), ``type`` a string from the catalog, ``status`` an
  integer, ``detail`` a string, ``requestId`` present (Resources > Error body); ``status`` equal to the HTTP
  status; ``requestId`` equal to the header; no ``retryable`` member;
- the HTTP status is one the error catalog gives for that ``type`` (contract/catalog/errors.yaml);
- money fields of successful answers are decimal strings (Conventions, Money), the fields being those the
  contract declares as ``DecimalString``;
- a request whose amount is zero or negative is not accepted (Errors: BAD_REQUEST "non-positive amount").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import schemathesis

from payconform import fuzz, rules
from payconform.fuzz import SpecViolation

# The requirements the checks of this module and the mapped built-in checks stand for (the fuzz tests' markers).
REQUIREMENTS = (
    "ERRBODY-ALL-FAILURES", "ERRBODY-SHAPE", "ERRBODY-STATUS-MATCHES", "ERRBODY-NO-RETRYABLE",
    "CONV-REQUEST-ID-HEADER", "CONV-REQUEST-ID-BODY", "CONV-MONEY-DECIMAL-STRING", "CONV-JSON-CONTENT-TYPE",
    "ERR-VALIDATION-ERROR", "ERR-BAD-REQUEST",
)
FAILURE_GROUPS = ("error_body", "error_catalog")  # judged on answers with a 4xx/5xx status only


def _context() -> rules.Context:
    session = fuzz.current()
    if session is None:
        return rules.Context()
    return rules.Context(session.contract, session.money_fields, session.amount_fields)


def _check(rule: rules.Rule) -> Callable[[Any, Any, Any], None]:
    """A schemathesis check that raises the rule's first violation of a response."""
    def check(ctx: Any, response: Any, case: Any) -> None:
        if rule.group in FAILURE_GROUPS and response.status_code < 400:
            return
        answer = rules.Answer.of(response.status_code, response.headers, response.content, case.body,
                                 fuzz.operation_id(case.operation))
        for requirement, problem in rules.violations(answer, [rule], _context()):
            raise SpecViolation(requirement, problem.what)

    check.__name__ = check.__qualname__ = f"payconform_{rule.name}"
    return check


for _rule in rules.RULES.values():
    schemathesis.check(_check(_rule))
