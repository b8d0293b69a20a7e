"""Shared data for the report tests: a synthetic run with every verdict, and the fake-suite CLI workdir."""

from __future__ import annotations

import pytest

from payconform import paths
from payconform.contract import Contract
from payconform.results.records import build_results

from ..harness.fake_project import cli, workdir  # noqa: F401  (the fake suite project and its CLI runner)

CONTRACT = Contract(requirements={
    "CONV-A": {"id": "CONV-A", "part": "conventions", "section": "Money", "quote": "Money is a decimal string.",
               "testable": True},
    "ERR-B": {"id": "ERR-B", "part": "errors", "section": "Errors", "quote": "A replayed key answers 409.",
              "testable": True},
    "EVT-SLOW": {"id": "EVT-SLOW", "part": "events", "section": "Delivery", "quote": "within about 15 seconds",
                 "testable": True, "level": "observe"},
    "AUTH-OP": {"id": "AUTH-OP", "part": "authentication", "section": "Keys", "quote": "A revoked key is refused.",
                "testable": True},
    "LIM-NS": {"id": "LIM-NS", "part": "limits", "section": "Paging", "quote": "Paging: not shown.",
               "testable": False, "reason": "not shown"},
    "LIM-NT": {"id": "LIM-NT", "part": "limits", "section": "Keys", "quote": "Keys stay on servers.",
               "testable": False, "reason": "cannot be observed over the API"},
})

SCHEMA_PATH = paths.PACKAGE_DIR / "schemas" / "results.schema.json"
SECRET = "svc_test_DO_NOT_LEAK_1234567890"
FAILURE_MESSAGE = (
    "[ERR-B] Errors > Errors: \"A replayed key answers 409.\"\n"
    "expected: 409 IDEMPOTENCY_KEY_REUSED\n"
    "target answered: POST http://127.0.0.1:9/business/api/v1/payouts -> 201\n"
    "body: {\"id\":\"po_1\"}\n"
    "x-request-id: req_fail_42"
)


def synthetic_tests() -> list[dict]:
    """One test per verdict, as the collector writes them."""
    base = {"duration": 0.1, "skip_reason": None, "needs": [], "profile_ops": [], "request_ids": []}
    return [
        dict(base, nodeid="suites/conventions/test_money.py::test_decimal", requirements=["CONV-A"],
             outcome="passed", verdict="passed", profile_ops=["fundSandbox"]),
        dict(base, nodeid="suites/errors/test_replay.py::test_replay_conflict", requirements=["ERR-B"],
             outcome="failed", verdict="failed", request_ids=["req_ok_1", "req_fail_42"], message=FAILURE_MESSAGE,
             transcript=[{"method": "POST", "url": "http://127.0.0.1:9/business/api/v1/payouts", "status": 201,
                          "request_headers": {"x-api-key": "svc_test_****"}, "request_body": "{}",
                          "response_headers": {"x-request-id": "req_fail_42"}, "response_body": "{\"id\":\"po_1\"}",
                          "request_id": "req_fail_42", "elapsed": 0.01}]),
        dict(base, nodeid="suites/events/test_delivery.py::test_delivered_soon", requirements=["EVT-SLOW"],
             outcome="failed", verdict="failed", message="expected: delivery within about 15 s\ntarget answered: 40 s"),
        dict(base, nodeid="suites/authentication/test_revoked.py::test_revoked", requirements=["AUTH-OP"],
             outcome="skipped", verdict="needs_operator", skip_reason="needs operator: cannot revoke_key"),
    ]


def synthetic_results() -> dict:
    run = {"started": "2026-11-22T10:00:00+00:00", "finished": "2026-11-22T10:01:00+00:00",
           "target": "http://127.0.0.1:9/business/api/v1", "org_id": "ckorg1", "contract_version": "1",
           "pytest_args": [], "run_slow": False, "select": []}
    return build_results(run=run, tests=synthetic_tests(), contract=CONTRACT)


@pytest.fixture
def results() -> dict:
    return synthetic_results()


def synthetic_cost() -> dict:
    """A run's ``cost`` as ``payconform.pacing.cost.run_cost`` writes it."""
    return {"requests": 1234, "by_phase": {"preflight": 12, "suites": 1000, "fuzz": 234, "operator": 40},
            "by_part": {"conventions": 400, "errors": 600, "fuzz": 234}, "by_credential": {"api_key": 1200, "none": 34},
            "issued_keys": 0, "rate_limited": {"planned": 3, "unplanned": 1}, "retry_after": {"waits": 1, "seconds": 2.0},
            "paced_seconds": 300.0, "floor_seconds": 740.4, "floor_binding": "default rate of one credential (100/min)",
            "wall_seconds": 800.0, "wall_over_floor": 1.081}
