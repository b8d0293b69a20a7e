"""What puts a sandbox payout in a scenario: the profile's `sandbox.payout_scenarios.select_by`.

The spec says sandbox outcomes are "driven by amounts and identifiers" without saying which. With
`account_suffix` the recipient's account identifier ends in the scenario code; with `amount_minor_suffix` the
payout's `sourceAmount` in minor units does (100.03 -> 10003 -> `0003`) and the recipient is any fresh one.
Every payout made for a scenario asks `selection` for both. Where a scenario's outcome did not come, a test
whose requirement is not that outcome asks `mismatch_unless_reached`: the other way of selecting is tried once,
and if it reaches the outcome the test ends as a profile mismatch naming the entry to set.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from decimal import Decimal
from typing import Any, NamedTuple

from payconform.suite import Contract, Exchange, ProfileMismatch

DEFAULT = "default"
ACCOUNT_SUFFIX = "account_suffix"
AMOUNT_MINOR_SUFFIX = "amount_minor_suffix"
WAYS = (ACCOUNT_SUFFIX, AMOUNT_MINOR_SUFFIX)
ENTRY = "sandbox.payout_scenarios.select_by"
HUNDREDS = 9  # scenario amounts run 100.0X .. 900.0X: below any approval threshold, within a top-up (1000.00)
_NEXT_HUNDRED = itertools.count()


class Selection(NamedTuple):
    """How a payout is put in a scenario: the last four characters its recipient's account needs (None: any
    fresh account) and its `sourceAmount` (None: the body's own)."""

    account_tail: str | None
    amount: str | None


def select_by(contract: Contract) -> str:
    """The profile's way of selecting a payout scenario (`account_suffix` unless it says otherwise)."""
    way = str(contract.profile["sandbox"]["payout_scenarios"].get("select_by") or ACCOUNT_SUFFIX)
    if way not in WAYS:
        raise ValueError(f"profile `{ENTRY}` is {way!r}, not one of {list(WAYS)}")
    return way


def scenario_amount(code: str, *, unique: bool = False) -> str:
    """A `sourceAmount` whose minor units end in `code`: 100.0X, or, `unique`, the next hundred of a cycle of
    `HUNDREDS` (two payouts under one caller reference are then not one body twice: the duplicate-body guard)."""
    hundreds = 1 + (next(_NEXT_HUNDRED) % HUNDREDS if unique else 0)
    return str((Decimal(hundreds * 10000 + int(code)) / 100).quantize(Decimal("0.01")))


def selection(contract: Contract, scenario: str, *, way: str | None = None, unique_amount: bool = False) -> Selection:
    """How to make a payout in `scenario` (the default scenario: a fresh account and the body's amount) the
    profile's way, or `way`."""
    if scenario == DEFAULT:
        return Selection(None, None)
    if (way or select_by(contract)) == ACCOUNT_SUFFIX:
        return Selection(scenario, None)
    return Selection(None, scenario_amount(scenario, unique=unique_amount))


def other_way(contract: Contract) -> str:
    return next(w for w in WAYS if w != select_by(contract))


def mismatch_unless_reached(contract: Contract, scenario: str, reached: bool, seen: str,
                            try_other: Callable[[str], bool], exchange: Exchange | Any = None) -> None:
    """Nothing when the payout in `scenario` `reached` its outcome; else, when a payout selected the other way
    (`try_other(way)`: made and read by the caller) reaches it, a `ProfileMismatch` naming `select_by` with
    the override that fits. When neither reaches it, the caller judges its own payout (a failure)."""
    if reached:
        return
    way = other_way(contract)
    if try_other(way):
        raise ProfileMismatch(
            ENTRY, f"a payout in sandbox scenario {scenario} selected by {select_by(contract)} {seen}; one selected "
                   f"by {way} reached the scenario's outcome",
            expected=select_by(contract),
            override={"sandbox": {"payout_scenarios": {"select_by": way}}}, exchange=exchange)
