"""Run tiers (``--tier smoke|full|deep``): how much of the suite a run spends its requests on.

- ``smoke``: the pull-request gate. Only the tests marked ``@pytest.mark.smoke`` run (``SMOKE_MARKER``): one
  per part at least, and tests that together name every row of every catalog table; no fuzz phase. It fits
  one key's rate limit in a few minutes (``tests/harness/test_tiers.py`` checks the coverage).
- ``full``: every test (the default).
- ``deep``: every test, ``--run-slow``, and a larger fuzz phase.

A tier names the run's request budget; the fuzz phase's budget (``--fuzz-max-requests``) defaults to a share
of it, and the run's header estimates the run's duration from it and the target's rate limits
(``payconform.cost.estimate``).
"""

from __future__ import annotations

from dataclasses import dataclass

SMOKE_MARKER = "smoke"
DEFAULT_TIER = "full"


@dataclass(frozen=True)
class Tier:
    name: str
    request_budget: int  # requests the run is planned to send (the duration estimate's basis)
    fuzz_requests: int  # the fuzz phase's request budget (whole phase, split over operations and workers)
    fuzz_examples: int | None  # generated requests per operation (None: fuzz.yaml's)
    run_slow: bool
    marker: str | None  # only tests with this marker run (None: every test)

    def describe(self) -> str:
        what = f"tests marked {self.marker}" if self.marker else "every test"
        return f"{self.name}: {what}" + (", --run-slow" if self.run_slow else "")


TIERS: dict[str, Tier] = {
    "smoke": Tier("smoke", request_budget=300, fuzz_requests=0, fuzz_examples=None, run_slow=False,
                  marker=SMOKE_MARKER),
    "full": Tier("full", request_budget=6000, fuzz_requests=2500, fuzz_examples=None, run_slow=False, marker=None),
    "deep": Tier("deep", request_budget=20000, fuzz_requests=12000, fuzz_examples=25, run_slow=True, marker=None),
}


def tier(name: str | None) -> Tier:
    """The tier called ``name`` (``full`` when None); ValueError names the choices."""
    try:
        return TIERS[name or DEFAULT_TIER]
    except KeyError:
        raise ValueError(f"unknown tier {name!r}: choose one of {', '.join(TIERS)}") from None
