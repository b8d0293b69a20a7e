"""Payouts made through the profile, read back through the spec's reads, and checked against the
`WebhookPayout` fields.

The `createPayout` body is not shown: it is the profile's example. The sandbox scenario of a payout is chosen
the profile's way (`sandbox.payout_scenarios.select_by`, `scenarios.selection`): a payout in a scenario goes to
a new recipient whose account ends in it, or carries an amount whose minor units end in it.
"""

from __future__ import annotations

import itertools
import secrets
from decimal import Decimal
from typing import Any

from payconform.suite import Api, Contract, Exchange, expect, expect_status, fill, run_contract

from . import runwide
from .accounts import method_body, with_account_tail
from .answers import member
from .balance import keep_funded
from .profile import corridors, items, setup_call, success
from .recipients import create_recipient, first_destination, post_recipient, recipient_body
from .scenarios import DEFAULT, selection
from .schemas import component
from .schemas import problems as schema_problems
from .types import Unique, shared_scope

_CENTS = itertools.count(1)  # the cent each payout under a given caller reference adds to its amount


def timeline(contract: Contract) -> dict[str, Any]:
    """The profile's payout timeline: how far to move the clock per step and until every scenario settled."""
    return contract.profile["sandbox"]["payout_scenarios"]["timeline"]


def payout_body(contract: Contract, destination: str, reference: str, **fields: Any) -> dict[str, Any]:
    """The profile's `createPayout` body to `destination` under the caller `reference`; `fields` override."""
    body = fill(contract.operation("createPayout").get("body") or {},
                {"destinationAccountId": destination, "unique": reference})
    body.update(fields)
    return body


def scenario_destination(api: Api, contract: Contract, unique: Unique, scenario: str = DEFAULT, *,
                         method: dict[str, Any] | None = None, way: str | None = None) -> str:
    """Keeps the balance funded (`keep_funded`) and returns the `destinationAccountId` of a recipient to pay in
    `scenario`: one whose account identifier ends in it where the profile selects scenarios by account (see
    `scenarios.selection`; the profile's default account picks no scenario), else any. A test only pays that
    destination, so with the profile's example method it is made once per organization, mode and account tail
    in the run and reused (`runwide`); `method` (a `method_body`) replaces the example and makes a new
    recipient. `way` selects the scenario another way than the profile's (`scenarios.WAYS`)."""
    keep_funded(api, contract)
    tail = selection(contract, scenario, way=way).account_tail

    def make() -> str:
        body = recipient_body(contract, unique)
        if method is not None:
            body["paymentMethod"] = method
        if tail is not None:  # the method is wherever the profile's body carries `recipientDetails`
            found = next(v for v in body.values() if isinstance(v, dict) and "recipientDetails" in v)
            found["recipientDetails"] = with_account_tail(found["recipientDetails"], tail)
        return first_destination(post_recipient(api, contract, body).json)

    if method is None:
        return runwide.shared(shared_scope(api), f"destination {tail or DEFAULT}", make)
    return make()


def scenario_payout_body(api: Api, contract: Contract, unique: Unique, scenario: str = DEFAULT, *,
                         reference: str | None = None, way: str | None = None) -> dict[str, Any]:
    """The profile's `createPayout` body of a payout in `scenario`: to `scenario_destination`, with the amount
    the profile's selection asks for. `reference` gives it that caller reference instead of a unique one, and an
    amount of its own (a cent above the last such payout's, or the next scenario amount), so that two of them
    are not one body twice (the duplicate-body guard) though they pay the same recipient. `way`: as in
    `scenario_destination`."""
    destination = scenario_destination(api, contract, unique, scenario, way=way)
    payload = payout_body(contract, destination, reference or unique("ref"))
    amount = selection(contract, scenario, way=way, unique_amount=reference is not None).amount
    if amount is not None:
        payload["sourceAmount"] = amount
    elif reference is not None:
        payload["sourceAmount"] = str(Decimal(str(payload["sourceAmount"])) + Decimal(next(_CENTS)) / 100)
    return payload


def payable_destination(api: Api, contract: Contract, unique: Unique) -> str:
    """Keeps the sandbox balance funded; the `destinationAccountId` of a recipient to pay (shared, as above)."""
    return scenario_destination(api, contract, unique)


def pay(api: Api, contract: Contract, unique: Unique, destination_account_id: str) -> Exchange:
    """A payout through the profile's `createPayout` body to `destination_account_id` (any answer; an accepted
    payout, a success other than the 202 of an approval, must carry its `payoutId`)."""
    ex = api.op("createPayout", json=payout_body(contract, destination_account_id, unique("po")))
    if ex.status in success(contract, "createPayout") - {202}:
        expect(isinstance(member(ex, "payoutId"), str), "the accepted payout's `payoutId` is not a string", ex)
    return ex


def create_payout(api: Api, contract: Contract, unique: Unique, scenario: str = DEFAULT, *,
                  reference: str | None = None, way: str | None = None) -> Exchange:
    """A payout in `scenario` (`scenario_payout_body`, selected the profile's way or `way`), which must be
    accepted as a payout (2xx with a `payoutId`)."""
    ex = api.op("createPayout", json=scenario_payout_body(api, contract, unique, scenario, reference=reference,
                                                          way=way))
    expect_status(ex, success(contract, "createPayout") - {202}, "creating a payout below any approval threshold")
    expect(isinstance(member(ex, "payoutId"), str), "the accepted payout's `payoutId` is not a string", ex)
    return ex


def as_created(api: Api, created: Exchange) -> dict[str, Any]:
    """The new payout's fields: the create answer's, completed by GET /orders/{payoutId} for those it leaves out
    ("Bodies and responses of the payout operations (create, ...): not shown", so it may be `{payoutId}`)."""
    answer = created.json if isinstance(created.json, dict) else {}
    return {**read_payout(api, answer["payoutId"]).json, **answer}


def keyed_payout(api: Api, contract: Contract, payload: dict, key: str, **kw: Any) -> Exchange:
    """A payout under the Idempotency-Key ``key`` that must be accepted and end in a payout (`payoutId`)."""
    ex = setup_call(api, contract, "createPayout", json=payload, idempotency_key=key, **kw)
    expect(isinstance(member(ex, "payoutId"), str), "the accepted payout's `payoutId` is not a string", ex)
    return ex


def read_payout(api: Api, payout_id: str) -> Exchange:
    """GET /orders/{payoutId}: 200 and that payout."""
    ex = api.op("getOrder", payoutId=payout_id)
    expect_status(ex, 200, "reading the payout with GET /orders/{payoutId}")
    expect(isinstance(ex.json, dict) and ex.json.get("payoutId") == payout_id,
           f"GET /orders/{payout_id} answered another payout or no `payoutId`", ex)
    return ex


def payouts_with_reference(api: Api, contract: Contract, reference: str) -> list[dict]:
    """The payouts `GET /orders?reference=` finds for ``reference``."""
    ex = api.op("listOrders", params={"reference": reference})
    expect_status(ex, 200, "GET /orders?reference=")
    return items(contract, "listOrders", ex)


def crypto_corridor(contract: Contract) -> str:
    """The first crypto corridor of the profile (the profile funds crypto payouts from the own wallet)."""
    return next(name for name, row in corridors(contract).items() if row.get("kind") == "crypto")


def crypto_payout_body(api: Api, contract: Contract, unique: Unique) -> dict[str, Any]:
    """A payout body (its own reference) to a recipient of the profile's first crypto corridor. A test only pays
    that recipient, so, like the fiat ones of `scenario_destination`, it is made once per organization and mode
    in the run and reused (`runwide`)."""
    corridor = crypto_corridor(contract)
    destination = runwide.shared(shared_scope(api), f"destination crypto:{corridor}", lambda: first_destination(
        create_recipient(api, contract, unique, paymentMethod=method_body(contract, corridor))))
    return payout_body(contract, destination, unique("ref"), destinationCurrency=corridors(contract)[corridor]["currency"])


def create_self_funded(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """A payout waiting on the organization's own funds (profile `sandbox.self_funded`: a crypto payout made
    with a key holding `crypto_payouts`); it must be accepted with `requiresFunding: true`."""
    ex = api.op("createPayout", json=crypto_payout_body(api, contract, unique))
    expect_status(ex, success(contract, "createPayout") - {202}, "creating a self-funded payout")
    expect(isinstance(member(ex, "payoutId"), str), "the accepted payout's `payoutId` is not a string", ex)
    return ex


def tx_hash(last_four: str = "") -> str:
    """An EVM-shaped transaction hash whose last four digits pick the sandbox outcome (profile
    `sandbox.funding_hash`); without `last_four`, one that picks none (accepted)."""
    tail = last_four or secrets.choice(["7a1c", "9e3f", "b00b", "c0de"])
    return "0x" + secrets.token_hex(30) + tail


CANCEL_ANSWERED = range(200, 300)


def cancel_payout(api: Api, payout_id: str, what: str) -> Exchange:
    """Cancel a payout: any 2xx, since the cancel's response is "not shown" (a 200 with the payout, a 202, a
    minimal body); what the cancel did is read back with GET /orders/{payoutId} by the caller."""
    return expect_status(api.op("cancelPayout", payoutId=payout_id), CANCEL_ANSWERED,
                         f"{what} (accepted: any 2xx; the cancel's response is not shown)")


# The fields of Resources > Payout a payout read and `payout.*` data carry; the nullable ones (`failureCode`,
# `fundsReturned`, `completedAt`, `endUser`, `endUserId`) may be null or left out. Their types are the contract's
# `WebhookPayout`, checked tolerantly (`schemas`).
PAYOUT_FIELDS = ("payoutId", "status", "requiresFunding", "sourceAmount", "destinationAmount", "rate", "sourceCurrency",
                 "destinationCurrency", "destinationAccountId", "fee", "createdAt")


def payout_problems(payout: dict[str, Any], sent: dict[str, Any], states: list[str]) -> list[str]:
    """How a payout falls short of the `WebhookPayout` fields (present, typed as the contract says, the caller's
    values)."""
    problems = [f"`{name}` is absent" for name in PAYOUT_FIELDS if name not in payout]
    problems += schema_problems(run_contract(), component(run_contract(), "WebhookPayout")[1], payout)

    def check(ok: bool, what: str) -> None:
        if not ok:
            problems.append(what)

    check(payout.get("status") in states, f"`status` is {payout.get('status')!r}, not one of {states}")
    fee = payout.get("fee")
    check("fee" not in payout or isinstance(fee, dict) and {"currency", "amount"} <= set(fee),
          f"`fee` is {fee!r}, not {{currency, amount}}")
    # no rule says a payout always has an end user: one sent without any may read them null or absent
    end_user, end_user_id = payout.get("endUser"), payout.get("endUserId")
    if sent.get("endUserId") is not None:
        check(isinstance(end_user, dict) and "id" in end_user, f"`endUser` is {end_user!r}, not {{id}}")
        check(end_user_id not in (None, ""), f"`endUserId` is {end_user_id!r}, not a string")
    check(payout.get("completedAt") is None or payout.get("status") == "completed",
          f"`completedAt` is {payout.get('completedAt')!r}, not null (or absent) before completion")
    for name in ("reference", "destinationAccountId", "sourceCurrency", "destinationCurrency"):
        check(payout.get(name) == sent.get(name), f"`{name}` is {payout.get(name)!r}, but {sent.get(name)!r} was sent")
    return problems
