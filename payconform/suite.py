"""What a conformance suite may use of the harness: one public surface over its private modules.

Test modules, ``suites/_support`` and the suites' ``conftest.py`` files import from here and nowhere else in
``payconform`` (``tests/test_boundaries.py`` holds them to it), so the harness can rearrange its modules
without touching a suite. What a test needs of the run itself (an urgent read, a timeout credit, the end of
the preflight, the operator, the run directory, observing exchanges, the fuzz session) is asked of the
``Run``: the ``run`` fixture, ``api.run``, or ``run_of(config)`` in a hook.
"""

from __future__ import annotations

from .client import AUTO, Api, Exchange, RequestInfo, SafetyError, new_idempotency_key
from .contract import OPENAPI_DOCUMENTS, Contract, run_contract
from .checks.expect import ContractViolation, expect, expect_error, expect_error_body, expect_status, fail, failure_message, shorten
from .fuzz.session import DOCUMENTS as FUZZ_DOCUMENTS
from .fuzz.session import ShareSpent, SpecViolation
from .fuzz.session import configure as configure_fuzz
from .fuzz.session import current as fuzz_session
from .fuzz.session import item_operation as fuzz_item_operation
from .fuzz.session import operation_id as fuzz_operation_id
from .fuzz.coverage import attach as attach_fuzz_coverage
from .fuzz.coverage import deferred as deferred_fuzz_coverage
from .operator import DEFAULT_FEATURES, Clock, OperatorError, OrgHandle
from .checks.paging import Page, Pager, Walk, created_together, cursor_paged_lists, expect_cursor_refused, expect_order_of, expect_same_sequence, holds, identity, in_order, inserted_between, list_items, missing_or_repeated, observe, observe_cursor_refused, tampered
from .placeholders import fill, leading_digits
from .plugin.markers import MANY_REQUESTS, needs, runs_many_requests
from .fuzz.properties import request_settings
from .reachability import needs_probe, probe_reason, static_reason
from .redact import SENSITIVE_HEADERS
from .checks.rules import DECIMAL, INSTANT, INSTANT_UTC, JSON_MEDIA_TYPE, RULES, Answer, Rule, is_decimal_string, is_instant, is_iso8601_date_time, is_utc_instant, media_type, refused_amount, violations
from .checks.rules import Context as RuleContext
from .run import Run, run_of
from .signer import (
    HEADER_NONCE,
    HEADER_REQUEST_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    P256_ORDER,
    Signer,
    body_digest,
    generate_private_key_pem,
    new_nonce,
    public_key_pem,
)
from .results.mismatch import ProfileMismatch
from .results.skips import Kind, Needs
from .target import API_KEY_NAMES, Target
from .waits import waiting_for
from .webhooks import Delivery, Mailbox, Receiver, SignatureError, verify

__all__ = [
    # the client and what it answers
    "AUTO", "Api", "Exchange", "RequestInfo", "SafetyError", "new_idempotency_key",
    # the contract and the target
    "OPENAPI_DOCUMENTS", "Contract", "run_contract", "API_KEY_NAMES", "Target",
    # assertions
    "ContractViolation", "expect", "expect_error", "expect_error_body", "expect_status", "fail",
    "failure_message", "shorten",
    # the run
    "Run", "run_of", "MANY_REQUESTS", "needs", "runs_many_requests",
    # what a test waits for, told when its timeout ends it: with waiting_for("a payout.created delivery"): ...
    "waiting_for",
    # skip reasons the report counts: Needs(Kind.OPERATOR, "cannot x").skip()
    "Kind", "Needs",
    # the target chose otherwise than the profile: raise ProfileMismatch(entry, seen, override=..., exchange=ex)
    "ProfileMismatch",
    # the operator
    "DEFAULT_FEATURES", "Clock", "OperatorError", "OrgHandle",
    # lists and pages
    "Page", "Pager", "Walk", "created_together", "cursor_paged_lists", "expect_cursor_refused", "expect_order_of", "list_items",
    "expect_same_sequence", "holds", "identity", "in_order", "inserted_between", "missing_or_repeated",
    "observe", "observe_cursor_refused", "tampered",
    # placeholders and property settings
    "fill", "leading_digits", "request_settings",
    # the spec's rules
    "DECIMAL", "INSTANT", "INSTANT_UTC", "JSON_MEDIA_TYPE", "RULES", "Answer", "Rule", "RuleContext",
    "is_decimal_string", "is_instant", "is_iso8601_date_time", "is_utc_instant", "media_type", "refused_amount",
    "violations",
    # signing (Mode B)
    "HEADER_NONCE", "HEADER_REQUEST_ID", "HEADER_SIGNATURE", "HEADER_TIMESTAMP", "P256_ORDER", "Signer",
    "body_digest", "generate_private_key_pem", "new_nonce", "public_key_pem",
    # webhooks
    "Delivery", "Mailbox", "Receiver", "SignatureError", "verify", "SENSITIVE_HEADERS",
    "needs_probe", "probe_reason", "static_reason",
    # the fuzz phase
    "FUZZ_DOCUMENTS", "ShareSpent", "SpecViolation", "attach_fuzz_coverage", "configure_fuzz",
    "deferred_fuzz_coverage", "fuzz_item_operation", "fuzz_operation_id", "fuzz_session",
]
