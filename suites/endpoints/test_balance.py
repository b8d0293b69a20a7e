"""Resources > Balance and Endpoints > Balance and ledger, GET /balance.

"Internal structure of each: not shown": the figures are found as the decimal strings under each top-level
name, currencies as three-letter upper-case strings. In the sandbox "the balance is one provider-held USD
figure and `wallet` is empty", so `provider` holds one decimal string (or, beside it, others such as an
`available` figure, the total being named total, amount or balance). Top-ups go through the
profile's `fundSandbox`; the balance may be "cached up to one minute", so a test reads it after moving the
organization's clock past that minute.
"""

from __future__ import annotations

import re
import secrets
import time
from decimal import Decimal
from typing import Any

import pytest

from payconform.suite import Api, Contract, expect

from .._support.answers import leaves
from .._support.balance import CACHE_SECONDS, figures, provider_figure, read_balance, top_up
from .._support.realtime import next_step, waits_minutes

CURRENCY = re.compile(r"^[A-Z]{3,4}$")


def _empty(value: Any) -> bool:
    return value in ([], {}, None) or (isinstance(value, (list, dict)) and not any(True for _ in leaves(value)))


@pytest.mark.req("BAL-GET", "BAL-FIELDS")
def test_balance_names(api: Api) -> None:
    """The answer carries `balances`, `provider`, `wallet` and `unavailable` (`ledger` is optional)."""
    ex = read_balance(api)
    for name in ("balances", "provider", "wallet", "unavailable"):
        expect(name in ex.json, f"the balance has no `{name}`: {sorted(ex.json)}", ex)


@pytest.mark.req("BAL-SANDBOX-SHAPE")
def test_sandbox_shape(api: Api) -> None:
    """Sandbox: `wallet` is empty and `provider` is one USD figure."""
    ex = read_balance(api)
    expect(_empty(ex.json.get("wallet")), f"the sandbox `wallet` is not empty: {ex.json.get('wallet')!r}", ex)
    provider_figure(ex)
    currencies = {v for _, v in leaves(ex.json.get("provider")) if isinstance(v, str) and CURRENCY.match(v)}
    currencies |= {k for k in (ex.json.get("provider") or {}) if CURRENCY.match(str(k))} \
        if isinstance(ex.json.get("provider"), dict) else set()
    expect(currencies == {"USD"}, f"the sandbox `provider` names currencies {sorted(currencies)}, not USD alone", ex)


@pytest.mark.req("BAL-BALANCES-SUM", "BAL-LEDGER-NOT-SUMMED")
def test_balances_is_the_sum_of_sources(api, contract: Contract) -> None:
    """`balances` is provider plus wallet, never plus the optional `ledger`, in any one answer (cached or not):
    on the target's own organization, topped up first so that its figures are not all zero."""
    top_up(api, contract, "25.00")
    ex = read_balance(api)
    total = sum(figures(ex, "wallet"), provider_figure(ex))
    balances = figures(ex, "balances")
    expect(balances == [total], f"`balances` holds {balances}; provider plus wallet is {total}", ex)


@pytest.mark.req("BAL-BALANCES-SUM")
@pytest.mark.needs("operator")
def test_balances_sums_the_wallet_per_currency(fresh_org, operator) -> None:
    """An organization's own wallet holding USDC on two chains (an operator state, read with a live key: the
    sandbox wallet is empty): `balances` holds the provider figure and one USDC figure, the two holdings summed
    ("sum of sources, one number per currency")."""
    handle = fresh_org()
    live = handle.api.with_credential(handle.issue_key(mode="live"))
    holdings = {"polygon": Decimal("12.25"), "base": Decimal("7.5")}
    for chain, amount in holdings.items():
        operator.set_wallet(handle.org_id, chain, "USDC", str(amount))
    ex = read_balance(live)
    provider, usdc = provider_figure(ex), sum(holdings.values())
    balances = sorted(figures(ex, "balances"))
    expect(balances == sorted([provider, usdc]),
           f"`balances` holds {balances}; the provider holds {provider} USD and the wallet USDC "
           f"{' + '.join(map(str, holdings.values()))} on two chains, so the sum of sources, one number per "
           f"currency, is {provider} USD and {usdc} USDC", ex)


@pytest.mark.smoke
@pytest.mark.req("BAL-CACHE", "BAL-CACHE-LIMIT")
@waits_minutes
def test_top_up_shows_within_a_minute(slow_timed, contract: Contract) -> None:
    """A top-up is in the balance once a minute has passed since it: the cache lasts up to a minute. On a fresh
    organization's clock the figure grew by the top-up; in real time on the target's own organization, where
    other tests move the balance too, it is not the figure read before the top-up (a figure kept longer would
    be), and the top-up's odd amount stays clear of the duplicate-body guard."""
    org = slow_timed(CACHE_SECONDS)
    amount = Decimal("40.00") + (Decimal(secrets.randbelow(10_000)) / 100 if org.real else 0)
    before = provider_figure(read_balance(org.api))
    started = time.monotonic()
    top_up(org.api, contract, f"{amount:.2f}")
    next_step(org.clock, org.org_id, CACHE_SECONDS, started, CACHE_SECONDS)
    with org.at_once():
        after = read_balance(org.api)
    if org.real:
        expect(provider_figure(after) != before,
               f"a minute after a {amount:.2f} top-up the provider figure is still {before}, the figure read before "
               "it", after)
    else:
        expect(provider_figure(after) == before + amount,
               f"a minute after a {amount:.2f} top-up the provider figure is {provider_figure(after)}, was {before}",
               after)


def _named(value: Any) -> set[str]:
    """The names a value holds: its strings, and its keys where it is an object."""
    names = {v for _, v in leaves(value) if isinstance(v, str)}
    return names | (set(value) if isinstance(value, dict) else set())


@pytest.mark.req("BAL-UNAVAILABLE-NAMES-SOURCE", "BAL-UNAVAILABLE-FLOOR")
@pytest.mark.needs("operator", "clock")
def test_unreadable_source_is_named_and_figures_are_a_floor(fresh_org, operator, clock, contract: Contract) -> None:
    """With the network-held source unreadable (an operator state) after a 25.00 top-up: `unavailable` names
    `provider`, and `balances` is a floor: no figure above what the readable sources hold (the sandbox wallet,
    empty)."""
    handle = fresh_org()
    top_up(handle.api, contract, "25.00")
    operator.set_balance_source_readable(handle.org_id, "provider", False)
    clock.advance(handle.org_id, CACHE_SECONDS)
    ex = read_balance(handle.api)
    expect("provider" in _named(ex.json.get("unavailable")),
           f"the provider source could not be read, but `unavailable` is {ex.json.get('unavailable')!r}", ex)
    readable = sum(figures(ex, "wallet"), Decimal(0))
    over = [b for b in figures(ex, "balances") if b > readable]
    expect(not over, f"`balances` holds {over} with the provider unreadable; the readable sources hold {readable}: "
           "non-empty `unavailable` means the figures are a floor", ex)


@pytest.mark.req("BAL-WALLET-FACE-VALUE")
@pytest.mark.needs("operator")
def test_wallet_tokens_at_face_value(fresh_org, operator) -> None:
    """An organization's own wallet holding USDC on one chain and USDT on another (an operator state, read
    with a live key: the sandbox wallet is empty): `wallet` names each chain and token, and its figures are
    the token amounts themselves, at face value."""
    handle = fresh_org()
    live = handle.api.with_credential(handle.issue_key(mode="live"))
    holdings = {("polygon", "USDC"): Decimal("12.345678"), ("base", "USDT"): Decimal("7.5")}
    for (chain, token), amount in holdings.items():
        operator.set_wallet(handle.org_id, chain, token, str(amount))
    ex = read_balance(live)
    named = _named(ex.json.get("wallet"))
    expect({"polygon", "base", "USDC", "USDT"} <= named, f"`wallet` does not name each chain and token: "
           f"{ex.json.get('wallet')!r}", ex)
    expect(sorted(figures(ex, "wallet")) == sorted(holdings.values()),
           f"`wallet` holds figures {figures(ex, 'wallet')} for {sorted(holdings.values())} tokens at face value", ex)
