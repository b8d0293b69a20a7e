"""A test's time waiting for the pacer is credited to its timeout (`payconform.pacing.timeouts`)."""

from __future__ import annotations

import signal
import socket
import threading
from types import SimpleNamespace

import pytest

from payconform.pacing import timeouts
from payconform.pacing.pacer import NoPacer
from payconform.run import Run
from payconform.transport.sender import Transport

pytest_plugins = ["pytester"]

TIMED = """
import time
import pytest
from payconform.pacing import timeouts

@pytest.mark.timeout(1.0)
def test_waits_for_the_pacer():
    timeouts.credit({credit})
    time.sleep(1.6)
"""


def test_a_credited_wait_does_not_time_the_test_out(pytester) -> None:
    # a credit far past the sleep: the test is about the credit moving the timer, not about scheduling margins
    pytester.makepyfile(test_credited=TIMED.format(credit=10.0))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:payconform", "-o", "timeout_method=signal")
    res.assert_outcomes(passed=1)


def test_without_the_credit_the_same_test_times_out(pytester) -> None:
    """The other direction: the timer is pytest-timeout's, and 1.6 s of sleep is past its 1 s."""
    pytester.makepyfile(test_uncredited=TIMED.format(credit=0.0))
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:payconform", "-o", "timeout_method=signal")
    res.assert_outcomes(failed=1)
    assert "Timeout" in res.stdout.str()


def test_outside_a_timed_test_nothing_is_armed() -> None:
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        pytest.skip("this session times its tests with an interval timer (pytest --timeout)")
    timeouts.credit(5.0)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


class _WaitingPacer(NoPacer):
    def acquire(self, credential, method="", url=""):
        return 7.5


def test_the_transport_credits_the_pacers_wait(monkeypatch) -> None:
    credited: list[float] = []
    monkeypatch.setattr(timeouts, "credit", credited.append)
    listener = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nx-request-id: r1\r\ncontent-length: 2\r\n\r\n{}")
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    port = listener.getsockname()[1]
    transport = Transport(SimpleNamespace(base_url=f"http://127.0.0.1:{port}", request_timeout=5.0),
                          run=Run(pacer=_WaitingPacer()))
    try:
        assert transport.send("GET", "/x").status == 200
    finally:
        transport.close()
        listener.close()
    assert credited == [7.5]
