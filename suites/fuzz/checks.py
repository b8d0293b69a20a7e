"""The spec's cross-cutting rules (``payconform.checks.rules``) as schemathesis checks, run on every fuzzed response.

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

Beside the checks, ``REACH`` counts the answers of the running test: a case whose key was refused (401, or 403
`FORBIDDEN`/`ACCOUNT_BLOCKED`: "A 401 or 403 means nothing ran") never reached the operation, so it checked
nothing about validation, and a fuzz test whose every case was refused so fails (``conftest.py``) instead of
passing on what it never saw.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import schemathesis

from payconform.suite import (
    RULES,
    Answer,
    Rule,
    RuleContext,
    SpecViolation,
    fuzz_operation_id,
    fuzz_session,
    violations,
)

from .tolerant import DASHBOARD_ONLY

# The requirements the checks of this module and the mapped built-in checks stand for (the fuzz tests' markers).
REQUIREMENTS = (
    "ERRBODY-ALL-FAILURES", "ERRBODY-SHAPE", "ERRBODY-STATUS-MATCHES", "ERRBODY-NO-RETRYABLE",
    "CONV-REQUEST-ID-HEADER", "CONV-REQUEST-ID-BODY", "CONV-MONEY-DECIMAL-STRING", "CONV-JSON-CONTENT-TYPE",
    "ERR-VALIDATION-ERROR", "ERR-BAD-REQUEST",
)
FAILURE_GROUPS = ("error_body", "error_catalog")  # judged on answers with a 4xx/5xx status only
# Answers that say the run's key itself was not accepted for the organization: the operation never ran. 401 of
# any type; 403 of these types (a key lacking a scope, INSUFFICIENT_SCOPE, is a key the operation refuses by rule).
KEY_REFUSED_403 = frozenset({"FORBIDDEN", "ACCOUNT_BLOCKED"})


class Reach:
    """The running fuzz test's answers, and which of them refused the key (reset before each test)."""

    def __init__(self) -> None:
        self.answered = 0
        self.refused: Counter[int] = Counter()

    def reset(self) -> None:
        self.answered = 0
        self.refused.clear()

    def count(self, status: int, type_: Any) -> None:
        self.answered += 1
        if status == 401 or (status == 403 and type_ in KEY_REFUSED_403):
            self.refused[status] += 1

    def unchecked(self) -> str | None:
        """Why the test checked nothing (every case refused the key before reaching the operation), or None."""
        if not self.answered or sum(self.refused.values()) < self.answered:
            return None
        statuses = " or ".join(str(s) for s in sorted(self.refused))
        return f"every case ({self.answered}) was refused with {statuses}"


REACH = Reach()


def payconform_reach(ctx: Any, response: Any, case: Any) -> None:
    """Counts, never fails: ``REACH`` is judged when the test ends. Not counted: a case sent with another method
    than the operation's (the coverage phase's undocumented method), and the cases of a dashboard-only operation,
    which refuses every API key by rule (its test checks that refusal)."""
    if (str(case.method).upper() != str(case.operation.method).upper()
            or case.operation.definition.raw.get(DASHBOARD_ONLY)):
        return
    body = Answer.of(response.status_code, response.headers, response.content).body
    REACH.count(response.status_code, body.get("type") if isinstance(body, dict) else None)


def _context() -> RuleContext:
    session = fuzz_session()
    if session is None:
        return RuleContext()
    return RuleContext(session.contract, session.money_fields, session.amount_fields)


def _check(rule: Rule) -> Callable[[Any, Any, Any], None]:
    """A schemathesis check that raises the rule's first violation of a response."""
    def check(ctx: Any, response: Any, case: Any) -> None:
        if rule.group in FAILURE_GROUPS and response.status_code < 400:
            return
        answer = Answer.of(response.status_code, response.headers, response.content, case.body,
                                 fuzz_operation_id(case.operation))
        for requirement, problem in violations(answer, [rule], _context()):
            raise SpecViolation(requirement, problem.what)

    check.__name__ = check.__qualname__ = f"payconform_{rule.name}"
    return check


for _rule in RULES.values():
    schemathesis.check(_check(_rule))
schemathesis.check(payconform_reach)
