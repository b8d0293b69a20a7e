"""The floor: the least wall time the published limits allow for a run's requests."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from payconform.pacing import accounting
from payconform.contract import Contract
from payconform.pacing.cost import STARTED_VAR, cost_line, floor, ratio, run_cost, run_started
from payconform.pacing.pacer import ANONYMOUS, credential_id, route_limits

LIMITS = dict(rate_limit=100, ip_rate_limit=2000)
ROUTES = route_limits([
    {"name": "balance_history", "per_minute": 60, "scope": "credential",
     "routes": ["GET /payments/organizations/{orgId}/balance/history"]},
    {"name": "batch_submission", "per_minute": 30, "scope": None,
     "routes": ["POST /payments/organizations/{orgId}/payouts/batches"]},
])


def test_one_key_is_held_to_its_default_rate() -> None:
    found = floor({"k": 1500}, {}, **LIMITS)
    assert found.seconds == 900.0 and "one credential" in found.binding


def test_a_pool_spreads_its_requests_over_its_keys() -> None:
    found = floor({"a": 1000, "b": 200}, {}, pool={"a", "b"}, **LIMITS)
    assert found.seconds == 360.0 and "key pool (2 x 100/min)" in found.binding


def test_the_ip_ceiling_binds_a_large_pool() -> None:
    counts = {str(i): 300 for i in range(20)}
    found = floor(counts, {}, pool=set(counts), **LIMITS)
    assert found.seconds == 180.0 and "per-source-IP" in found.binding


def test_route_rows_bind_when_stricter() -> None:
    history = floor({"k": 90}, {"balance_history": {"k": 90}}, route_limits=ROUTES, **LIMITS)
    assert history.seconds == 90.0 and history.binding.startswith("balance_history")
    # batch submission's scope is not shown: its budget is the whole run's, across credentials
    batches = floor({"a": 40, "b": 40}, {"batch_submission": {"a": 40, "b": 40}}, route_limits=ROUTES, **LIMITS)
    assert batches.seconds == 160.0 and batches.binding == "batch_submission (30/min)"


def test_exempt_and_anonymous_requests_spend_the_ip_ceiling_only() -> None:
    found = floor({"rl": 400, ANONYMOUS: 300, "k": 10}, {}, exempt={"rl"}, **LIMITS)
    assert found.seconds == pytest.approx(21.3) and "per-source-IP" in found.binding


def test_ratio_of_nothing_sent_is_none() -> None:
    assert ratio(10.0, 0.0) is None and ratio(115.0, 100.0) == 1.15


def test_run_cost_adds_floor_wall_and_ratio() -> None:
    key = "svc_test_" + "a" * 32
    counts = accounting.RunCounts()
    tally = accounting.new_tally()
    tally.update(requests=200, credentials={credential_id(key): 200})
    counts.add("suites/endpoints/test_a.py::test_a", tally)
    target = SimpleNamespace(credentials={"api_key": key}, pool=[key], rate_limit=100, ip_rate_limit=2000)
    contract = Contract(requirements={}, limits={"rate_limits": []})
    cost = run_cost(counts, target, contract, [{"nodeid": "suites/endpoints/test_a.py::test_a"}], 138.0)
    assert (cost["floor_seconds"], cost["wall_seconds"], cost["wall_over_floor"]) == (120.0, 138.0, 1.15)
    assert cost["by_credential"] == {"api_key": 200}
    line = cost_line(cost)
    assert "requests: 200" in line and "floor 120s" in line and "wall/floor 1.15" in line and "0 unplanned" in line
    assert "on purpose" not in line
    tripped = cost_line({**cost, "over_limit": {"requests": 101, "credentials": ["rate_limit_key"]}})
    assert "operator calls 0; 101 of them over a limit on purpose (rate_limit_key))" in tripped


def test_the_floor_counts_the_preflight_the_wall_includes() -> None:
    """The wall runs from the command's start, so the preflight's requests are in the floor (not in the
    suite's request count)."""
    key = "svc_test_" + "a" * 32
    counts = accounting.RunCounts()
    for scope, n in (("suites/endpoints/test_a.py::test_a", 180), (accounting.PREFLIGHT, 20)):
        tally = accounting.new_tally()
        tally.update(requests=n, credentials={credential_id(key): n})
        counts.add(scope, tally)
    target = SimpleNamespace(credentials={"api_key": key}, pool=[key], rate_limit=100, ip_rate_limit=2000)
    cost = run_cost(counts, target, Contract(requirements={}, limits={"rate_limits": []}), [], 138.0)
    assert (cost["requests"], cost["floor_seconds"]) == (180, 120.0)


def test_the_wall_starts_when_the_command_started(monkeypatch) -> None:
    monkeypatch.setenv(STARTED_VAR, "1700000000.5")
    assert run_started().timestamp() == 1700000000.5
    monkeypatch.setenv(STARTED_VAR, "not a time")
    assert abs(run_started().timestamp() - time.time()) < 5
