"""`--exchange-log`: every API answer, as sent, with the operation the router matched."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.testclient import TestClient

from payconform.reference.app import build_app
from payconform.reference.core.exchange_log import ExchangeLog
from payconform.reference.reference import API_PREFIX, Reference


def test_each_answer_is_logged_with_its_operation(ref: Reference, tmp_path: Path) -> None:
    log = tmp_path / "exchanges.jsonl"
    with TestClient(ExchangeLog(build_app(ref), log, API_PREFIX), raise_server_exceptions=False) as client:
        client.get(API_PREFIX + "/payments/organizations/o1/balance")  # no key: 401
        client.post(API_PREFIX + "/payments/organizations/o1/balance")  # a method the route does not take
        client.get("/_operator/health")  # outside the API: not logged
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(r["operationId"], r["method"], r["path"], r["status"]) for r in rows] == [
        ("getBalance", "GET", "/payments/organizations/o1/balance", 401),
        (None, "POST", "/payments/organizations/o1/balance", 404)]
    assert rows[0]["body"]["type"] == "UNAUTHORIZED" and rows[0]["contentType"].startswith("application/json")
    assert rows[1]["body"]["type"] == "ROUTE_NOT_FOUND"
