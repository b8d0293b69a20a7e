"""Whether a payout made in a sandbox scenario reached that scenario's outcome, and, where it did not, whether
the profile's way of selecting scenarios is the cause.

The spec drives sandbox outcomes "by amounts and identifiers" without saying which, so a payout the profile put
in scenario 0003 that completes may be a deployment that selects scenarios the other way, not one that breaks
the scenario. A test that depends on the outcome asks `mismatch_unless_in_scenario` before judging: when the
payout did not reach the outcome and one made the other way does (walked on the same clock), the test ends as a
profile mismatch naming `sandbox.payout_scenarios.select_by`; when neither does, the test judges its own payout.
"""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, Contract, Exchange

from .machines import RETURNED, Reading, came_back, path, walk
from .payouts import create_payout
from .scenarios import DEFAULT, mismatch_unless_reached
from .types import Unique

SKIPS_PROCESSING = "0002"  # the profile's scenario that goes from pending to completed


def reached(contract: Contract, scenario: str, readings: list[Reading]) -> bool:
    """Whether the readings of a payout show `scenario`'s outcome: back from the bank (read completed, then
    failed, or read with the table's returned fields), completed without `processing`, or failed."""
    seen = path(readings)
    if scenario == RETURNED:
        returned = contract.machine("payout")["returned"]
        return came_back(readings) or all(readings[-1].body.get(k) == v for k, v in returned.items())
    if scenario == SKIPS_PROCESSING:
        return seen[-1:] == ["completed"] and "processing" not in seen
    return seen[-1:] == ["failed"]


def mismatch_unless_in_scenario(api: Api, clock: Any, org_id: str, contract: Contract, unique: Unique,
                                scenario: str, readings: list[Reading]) -> None:
    """Nothing when the payout reached `scenario`'s outcome (or is of the default scenario); else, when a payout
    selected the other way reaches it, a `ProfileMismatch` naming the entry that fits (see the module)."""
    if scenario == DEFAULT or reached(contract, scenario, readings):
        return

    def try_other(way: str) -> bool:
        payout_id = create_payout(api, contract, unique, scenario, way=way).json["payoutId"]
        other = walk(api, clock, org_id, contract, payout_id, until=lambda rs: reached(contract, scenario, rs))
        return reached(contract, scenario, other)

    mismatch_unless_reached(contract, scenario, False, f"went {' -> '.join(map(str, path(readings)))}", try_other,
                            readings[-1].ex)


def one_reading(ex: Exchange) -> list[Reading]:
    """A payout's single read as a walk's readings (a test that moved the clock once and read it)."""
    return [Reading(0.0, ex)]
