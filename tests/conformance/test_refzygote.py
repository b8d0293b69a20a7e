"""The reference servers of the kill matrix, forked by the fork server (``forked``), behave as started ones: they
serve, stop, and fail loudly."""

from __future__ import annotations

import httpx
import pytest

from payconform.refserver import RefServerError

from .forked import ForkedRefServer


def test_a_forked_server_serves_and_stops() -> None:
    server = ForkedRefServer(mutant="payout-status-uppercase")
    with server:
        proc = server.proc
        answer = httpx.get(server.operator_url + "/health", timeout=30, trust_env=False)
        assert answer.status_code == 200, answer.text
        assert proc is not None and proc.poll() is None
    assert proc.poll() is not None, "the forked server still runs after stop()"


def test_a_server_that_cannot_start_says_why() -> None:
    with pytest.raises(RefServerError, match="no-such-mutant"):
        ForkedRefServer(mutant="no-such-mutant", startup_timeout=120).start()
