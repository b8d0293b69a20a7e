"""The rate-limit tests' trip (`suites/_support/rates.py`): a 429 judged under every reading of a 60-second
window, against simulated targets on a virtual clock, with the run's pacing file counting what was sent."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import httpx
import pytest

from payconform.checks.expect import ContractViolation
from payconform.pacing.pacer import Pacer
from payconform.transport.sender import Exchange, RequestInfo
from suites._support import rates
from suites._support.rates import Judged, Window, trip

KEY = "sk_test_trip"
LIMIT = Judged(100, 60, "the spec's 100 per minute")


@dataclass
class Clock:
    now: float = 1_000_020.0  # 20 s into an aligned minute

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Target:
    """A limiter: windows ``kind`` (anchored at the first request, sliding, or aligned minutes), ``limit``."""

    clock: Clock
    kind: str = "anchored"
    limit: int = 100
    served: list[float] = field(default_factory=list)

    def answer(self) -> tuple[int, dict[str, str]]:
        t = self.clock.now
        if self.kind == "sliding":
            held = [s for s in self.served if s > t - 60]
            frees = held[len(held) - self.limit] + 60 if len(held) >= self.limit else t
        else:
            start = math.floor(t / 60) * 60 if self.kind == "aligned" else next(
                (s for s in self.served if s > t - 60 and all(p <= s - 60 for p in self.served if p < s)), t)
            held = [s for s in self.served if start <= s <= t]
            frees = start + 60
        if len(held) >= self.limit:
            return 429, {"retry-after": str(max(1, math.ceil(frees - t)))}
        self.served.append(t)
        return 200, {}


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(rates, "time", fake)
    return fake


def _trip(tmp_path, clock: Clock, target: Target, prior: int = 0) -> Exchange:
    pacer = Pacer(tmp_path / "pacing.sqlite3", clock=clock.time, exempt=[KEY])
    api = type("Api", (), {"pacer": pacer, "credential": KEY})()

    def send(n: int) -> Exchange:
        pacer.acquire(KEY)
        status, headers = target.answer()
        clock.now += 0.05
        pacer.settle()
        return Exchange(RequestInfo("GET", "http://t/balance", httpx.Headers(), b""), status, httpx.Headers(headers),
                        b"{}", 0.05)

    for _ in range(prior):
        send(0)
    return trip(Window(api, rates_contract()), send, lambda ex, n: None, LIMIT)


def rates_contract():
    return type("Contract", (), {"limits": {"rate_limits": [{"name": "default", "per_minute": 100,
                                                             "window_seconds": 60}]}})()


def test_a_refusal_once_the_window_holds_the_limit_passes(tmp_path, clock):
    target = Target(clock)
    assert _trip(tmp_path, clock, target, prior=63).status == 429
    assert len(target.served) == 100  # the 63 sent before count: 37 more, then the refusal


def test_a_sliding_window_passes(tmp_path, clock):
    assert _trip(tmp_path, clock, Target(clock, "sliding"), prior=30).status == 429


def test_a_fixed_minute_turning_inside_the_burst_is_waited_out(tmp_path, clock):
    clock.now = 1_000_079.0  # a second before the minute turns: 20 served before it, 100 after
    target = Target(clock, "aligned")
    assert _trip(tmp_path, clock, target).status == 429
    assert len(target.served) == 220 and clock.now > 1_000_140  # its Retry-After waited, then a fresh burst


def test_a_refusal_before_the_window_can_hold_the_limit_fails(tmp_path, clock):
    with pytest.raises(ContractViolation, match="refused with 429 while the credential's window held at most 99"):
        _trip(tmp_path, clock, Target(clock, limit=99), prior=10)


def test_no_limit_fails(tmp_path, clock):
    with pytest.raises(ContractViolation, match="201 requests in a row were served"):
        _trip(tmp_path, clock, Target(clock, limit=10**6))
