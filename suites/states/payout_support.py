"""Payouts that walk the sandbox lifecycle, for the payout state and endpoint suites.

The transition tables come from `contract/catalog/transitions.yaml`; the sandbox scenario of a payout
(chosen by the last four characters of the recipient's account identifier) and how far to move the clock
come from the profile (`sandbox.payout_scenarios`), because the spec shows neither. A walk reads the payout
through the spec's authoritative read (`GET /orders/{payoutId}`) after every step of time and keeps every
answer, so a test can check both where the payout ended and that it never moved backwards on the way.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from payconform.client import Api, Exchange
from payconform.contract import Contract
from payconform.expect import expect, expect_status

from ..endpoints.factories import (
    UNIQUE_FIELDS,
    contract_now,
    corridors,
    fill,
    fund_sandbox,
    method_body,
    post_recipient,
    recipient_body,
    success,
)

Unique = Callable[[str], str]
DEFAULT = "default"


@lru_cache(maxsize=4)
def _machines(directory: str) -> dict[str, Any]:
    doc = yaml.safe_load((Path(directory) / "catalog" / "transitions.yaml").read_text(encoding="utf-8")) or {}
    return doc.get("machines") or {}


def machine(name: str, contract: Contract | None = None) -> dict[str, Any]:
    """One transition table of the catalog (`payout`, `payout_batch`, `payout_approval`)."""
    c = contract or contract_now()
    return _machines(str(c.directory))[name]


def scenario_rows(name: str = "payout") -> list[tuple[dict, str, bool]]:
    """(row, scenario, move expected) for every catalog row the sandbox drives through a payout scenario."""
    cases = []
    for row in machine(name)["rows"]:
        sandbox = row.get("sandbox") or {}
        cases += [(row, s, True) for s in sandbox.get("scenarios") or ()]
        cases += [(row, s, False) for s in sandbox.get("skipped_by") or ()]
    return cases


def timeline(contract: Contract) -> dict[str, Any]:
    return contract.profile["sandbox"]["payout_scenarios"]["timeline"]


def scenario_destination(api: Api, contract: Contract, unique: Unique, scenario: str = DEFAULT, *,
                         method: dict[str, Any] | None = None) -> str:
    """Tops up the balance and creates a recipient whose account identifier ends in `scenario`;
    returns the `destinationAccountId` to pay (the profile's default account picks no scenario). `method`
    (a `method_body`) replaces the profile's example payment method."""
    fund_sandbox(api, contract)
    body = recipient_body(contract, unique)
    if method is not None:
        body["paymentMethod"] = method
    details = body["paymentMethod"]["recipientDetails"]
    if scenario != DEFAULT:
        field = next(f for f in UNIQUE_FIELDS if f in details)
        details[field] = details[field][:-4] + scenario
    methods = post_recipient(api, contract, body).get("paymentMethods") or []
    expect(methods and methods[0].get("destinationAccountId"),
           "setup: the new recipient has no paymentMethods[0].destinationAccountId")
    return methods[0]["destinationAccountId"]


def payout_body(contract: Contract, destination: str, reference: str, **fields: Any) -> dict[str, Any]:
    body = fill(contract.operation("createPayout").get("body") or {},
                {"destinationAccountId": destination, "unique": reference})
    body.update(fields)
    return body


def create(api: Api, contract: Contract, unique: Unique, scenario: str = DEFAULT, *,
           reference: str | None = None) -> Exchange:
    """A payout in `scenario`, which must be accepted as a payout (2xx with a `payoutId`); `reference` gives
    it that caller reference instead of a unique one."""
    payload = payout_body(contract, scenario_destination(api, contract, unique, scenario), reference or unique("ref"))
    ex = api.op("createPayout", json=payload)
    expect_status(ex, success(contract, "createPayout") - {202}, "creating a payout below any approval threshold")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("payoutId"), str),
           "the accepted payout carries no `payoutId`", ex)
    return ex


def read(api: Api, payout_id: str) -> Exchange:
    """GET /orders/{payoutId}: 200 and that payout."""
    ex = api.op("getOrder", payoutId=payout_id)
    expect_status(ex, 200, "reading the payout with GET /orders/{payoutId}")
    expect(isinstance(ex.json, dict) and ex.json.get("payoutId") == payout_id,
           f"GET /orders/{payout_id} answered another payout or no `payoutId`", ex)
    return ex


class Reading(NamedTuple):
    elapsed: float
    ex: Exchange

    @property
    def body(self) -> dict[str, Any]:
        return self.ex.json

    @property
    def status(self) -> Any:
        return self.ex.json.get("status")


def walk(api: Api, clock: Any, org_id: str, contract: Contract, payout_id: str, *, reads_per_step: int = 1,
         seconds: float | None = None) -> list[Reading]:
    """Reads the payout now and after every profile step of the organization's clock, up to `seconds`
    (default: the profile's `settle_seconds`)."""
    tl = timeline(contract)
    step, end = float(tl["step_seconds"]), float(seconds if seconds is not None else tl["settle_seconds"])
    readings, elapsed = [], 0.0
    while True:
        readings += [Reading(elapsed, read(api, payout_id)) for _ in range(reads_per_step)]
        if elapsed >= end:
            return readings
        clock.advance(org_id, step)
        elapsed += step


def path(readings: list[Reading]) -> list[Any]:
    """The statuses seen, consecutive repeats collapsed."""
    seen: list[Any] = []
    for r in readings:
        if not seen or seen[-1] != r.status:
            seen.append(r.status)
    return seen


def expect_forward_only(readings: list[Reading], contract: Contract) -> None:
    """Every change between two consecutive reads is a move of the payout table (never backwards)."""
    table = machine("payout", contract)
    moves = {tuple(m) for m in table["moves"]}
    for before, after in itertools.pairwise(readings):
        if before.status != after.status:
            expect((before.status, after.status) in moves,
                   f"the payout moved from {before.status!r} to {after.status!r} between two reads "
                   f"({after.elapsed:.0f} s after creation); the payout table has no such move", after.ex)


def first(readings: list[Reading], status: str) -> Reading | None:
    return next((r for r in readings if r.status == status), None)


def crypto_corridor(contract: Contract) -> str:
    """The first crypto corridor of the profile (the profile funds crypto payouts from the own wallet)."""
    return next(name for name, row in corridors(contract).items() if row.get("kind") == "crypto")


def crypto_payout_body(api: Api, contract: Contract, unique: Unique) -> dict[str, Any]:
    """A payout body to a new recipient of the profile's first crypto corridor."""
    corridor = crypto_corridor(contract)
    body = recipient_body(contract, unique, paymentMethod=method_body(contract, corridor))
    methods = post_recipient(api, contract, body).get("paymentMethods") or []
    expect(methods and methods[0].get("destinationAccountId"),
           "setup: the new recipient has no paymentMethods[0].destinationAccountId")
    return payout_body(contract, methods[0]["destinationAccountId"], unique("ref"),
                       destinationCurrency=corridors(contract)[corridor]["currency"])


def create_self_funded(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """A payout waiting on the organization's own funds (profile `sandbox.self_funded`: a crypto payout made
    with a key holding `crypto_payouts`); it must be accepted with `requiresFunding: true`."""
    ex = api.op("createPayout", json=crypto_payout_body(api, contract, unique))
    expect_status(ex, success(contract, "createPayout") - {202}, "creating a self-funded payout")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("payoutId"), str),
           "the accepted payout carries no `payoutId`", ex)
    return ex


def tx_hash(last_four: str = "") -> str:
    """An EVM-shaped transaction hash whose last four digits pick the sandbox outcome (profile
    `sandbox.funding_hash`); without `last_four`, one that picks none (accepted)."""
    tail = last_four or secrets.choice(["7a1c", "9e3f", "b00b", "c0de"])
    return "0x" + secrets.token_hex(30) + tail
