"""Run tiers (``--tier smoke|full|deep``): how much of the suite a run spends its requests on.

- ``smoke``: the pull-request gate. Only the tests marked ``@pytest.mark.smoke`` run (``SMOKE_MARKER``): one
  per part at least, and tests that together name every row of every catalog table; no fuzz phase. It fits
  one key's rate limit in a few minutes (``tests/harness/test_tiers.py`` checks the coverage).
- ``full``: every test (the default).
- ``deep``: every test, ``--run-slow``, and a larger fuzz phase.

A tier names the run's request budget for one key at the spec's default rate (``request_budget``: a time,
which the keys at hand - ``Pace``: an ``api_key_pool``, the target's rate limits - turn into requests) and the
floor a run with a pool of keys aims at (``seconds``). The suites spend about ``suite_requests`` (measured on
a one-key target: what they send with the run's equivalent keys, which the fuzz phase sends with too); the
fuzz phase's budget (``--fuzz-max-requests``) defaults to what the binding limit leaves after them in the
lesser of the two times: the keys' requests a minute, per key or, for a pool large enough, the per-source-IP
ceiling (``Pace.per_minute``). It is at most ``fuzz_requests`` and at least ``FUZZ_MINIMUM``: one key gets a
small phase that still reaches every operation, a pool the rest of its ``seconds``, not the rest of a one-key
run's time (more keys make a run shorter, not longer). The run's header prints both and estimates the run's
duration from them and the target's rate limits (``payconform.pacing.cost.estimate``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..target import Target

SMOKE_MARKER = "smoke"
DEFAULT_TIER = "full"
SPEC_RATE = 100  # Limits, "Default rate | 100 requests per minute per API credential": a budget's unit
SPEC_IP_RATE = 2000  # Limits, "Per-source-IP ceiling | 2,000 per minute"
FUZZ_MINIMUM = 100  # the least fuzz phase a tier with one runs: a case per operation and the property tests' first examples (0 is "no cap")


@dataclass(frozen=True)
class Pace:
    """The credentials a run sends with: equivalent keys and the target's limits (per credential, per IP)."""

    keys: int = 1
    rate_limit: int = SPEC_RATE
    ip_rate_limit: int = SPEC_IP_RATE

    @classmethod
    def of(cls, target: Target | None) -> Pace:
        """The pace of ``target``'s key pool (one key when there is no target yet)."""
        if target is None:
            return ONE_KEY
        return cls(len(target.pool) or 1, target.rate_limit, target.ip_rate_limit)

    def per_minute(self) -> int:
        """Requests a minute these keys may send together (the IP ceiling caps a large pool)."""
        return max(1, min(max(self.keys, 1) * self.rate_limit, self.ip_rate_limit))


ONE_KEY = Pace()


@dataclass(frozen=True)
class Tier:
    name: str
    request_budget: int  # requests the run is planned to send with one key at the spec's rate (its time)
    seconds: float  # the floor the run aims at with a pool of keys: the fuzz phase gets what the suites leave
    suite_requests: int  # what the tier's suites send against a one-key target (measured by benchmarks/run_cost.py)
    fuzz_requests: int  # the most the fuzz phase sends (whole phase, split over operations and workers)
    fuzz_examples: int | None  # generated requests per operation (None: fuzz.yaml's)
    run_slow: bool
    marker: str | None  # only tests with this marker run (None: every test)

    def describe(self) -> str:
        what = f"tests marked {self.marker}" if self.marker else "every test"
        return f"{self.name}: {what}" + (", --run-slow" if self.run_slow else "")

    def budget(self, pace: Pace = ONE_KEY) -> int:
        """The run's request budget with ``pace``'s keys: the time ``request_budget`` takes one key at the
        spec's rate, at the rate these keys may send together."""
        return self.request_budget * pace.per_minute() // SPEC_RATE

    def fuzz_budget(self, pace: Pace = ONE_KEY) -> int:
        """The fuzz phase's default request budget: what the run's budget, or the keys' binding limit in
        ``seconds`` if less, leaves after the suites; at most ``fuzz_requests``, at least ``FUZZ_MINIMUM`` (0 for
        a tier without a fuzz phase)."""
        if not self.fuzz_requests:
            return 0
        room = min(self.budget(pace), int(pace.per_minute() * self.seconds / 60))
        return max(FUZZ_MINIMUM, min(self.fuzz_requests, room - self.suite_requests))

    def planned(self, pace: Pace = ONE_KEY) -> int:
        """The requests a run of this tier is expected to send with ``pace``'s keys: the suites and the fuzz
        phase's budget (the run's header estimates its duration from it)."""
        return self.suite_requests + self.fuzz_budget(pace)


TIERS: dict[str, Tier] = {
    "smoke": Tier("smoke", request_budget=300, seconds=60, suite_requests=350, fuzz_requests=0,
                  fuzz_examples=None, run_slow=False, marker=SMOKE_MARKER),
    # a pool's run within 120 s with wall time at most 1.15 x its floor: a floor of 100 s
    "full": Tier("full", request_budget=1500, seconds=100, suite_requests=1480, fuzz_requests=2500,
                 fuzz_examples=None, run_slow=False, marker=None),
    "deep": Tier("deep", request_budget=20000, seconds=900, suite_requests=1900, fuzz_requests=12000,
                 fuzz_examples=25, run_slow=True, marker=None),
}


def tier(name: str | None) -> Tier:
    """The tier called ``name`` (``full`` when None); ValueError names the choices."""
    try:
        return TIERS[name or DEFAULT_TIER]
    except KeyError:
        raise ValueError(f"unknown tier {name!r}: choose one of {', '.join(TIERS)}") from None
