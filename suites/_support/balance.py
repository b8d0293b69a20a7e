"""The sandbox balance: top-ups through the profile's `fundSandbox`, and reading the figures of GET /balance,
whose inner structure is not shown (figures are the decimal strings under each top-level name)."""

from __future__ import annotations

from decimal import Decimal

from payconform.suite import Api, Contract, Exchange, expect, expect_status, fill

from .answers import leaves
from .money import is_decimal_string
from . import runwide
from .profile import success
from .types import shared_scope

CACHE_SECONDS = 61  # the balance may be "cached up to one minute": read it after moving the clock past that


def fund_sandbox(api: Api, contract: Contract) -> None:
    """Top up the sandbox balance with the profile's `fundSandbox` body."""
    ex = api.op("fundSandbox", json=fill(contract.operation("fundSandbox").get("body") or {}, {}))
    expect_status(ex, success(contract, "fundSandbox"), "topping up the sandbox balance")


TOP_UP_EVERY = 10  # payouts' destinations a profile top-up (1000.00) pays for: ten tests of a few 10.00 payouts


def keep_funded(api: Api, contract: Contract) -> None:
    """Top up the sandbox balance before the run's first payout in an organization and mode, then before every
    `TOP_UP_EVERY`-th (a count the run's workers share, `runwide`): one top-up pays for many payouts of the
    profile's body, so a payout test need not send one of its own. A test about the balance tops up itself
    (`fund_sandbox`, `top_up`)."""

    def count(since_top_up: int | None) -> int:
        if since_top_up is None or since_top_up >= TOP_UP_EVERY:
            fund_sandbox(api, contract)
            since_top_up = 0
        return since_top_up + 1

    runwide.update(shared_scope(api), "destinations since the top-up", count)


def top_up(api: Api, contract: Contract, amount: str) -> Exchange:
    """A sandbox top-up of `amount` USD through the profile's `fundSandbox`; distinct amounts keep the
    duplicate-body guard out of the way and make each top-up recognizable in the ledger."""
    body = fill(contract.operation("fundSandbox").get("body") or {}, {})
    ex = api.op("fundSandbox", json={**body, "amount": amount})
    expect_status(ex, success(contract, "fundSandbox"), f"topping up the sandbox balance by {amount}")
    return ex


def read_balance(api: Api) -> Exchange:
    ex = expect_status(api.op("getBalance"), 200, "reading the balance")
    expect(isinstance(ex.json, dict), "the balance is not a JSON object", ex)
    return ex


def figures(ex: Exchange, name: str) -> list[Decimal]:
    """Every decimal-string figure under the top-level `name`."""
    return [Decimal(v) for _, v in leaves(ex.json.get(name)) if is_decimal_string(v)]


TOTAL_NAMES = ("total", "amount", "balance")


def provider_figure(ex: Exchange) -> Decimal:
    """The sandbox's one provider-held figure. The inner structure is not shown and the spec also names an
    `available` figure, so beside the total a source may hold others: then the one named total, amount or
    balance is the figure."""
    found = [(path, Decimal(v)) for path, v in leaves(ex.json.get("provider")) if is_decimal_string(v)]
    if len(found) > 1:
        found = [(path, v) for path, v in found if path.rsplit(".", 1)[-1] in TOTAL_NAMES]
    expect(len(found) == 1, f"`provider` holds {len(found)} figures named {TOTAL_NAMES} (accepted: one decimal "
                            "string, or several of which one is named so); the sandbox has one USD figure", ex)
    return found[0][1]
