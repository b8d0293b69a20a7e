"""Errors on sending: `CRYPTO_PAYOUTS_DISABLED`, `INSUFFICIENT_BALANCE`, and `ORDERS_TEMPORARILY_UNAVAILABLE` on
the payout lookup by reference.

Crypto payouts: a key without `crypto_payouts` is refused; a key with it (the target's `crypto_key`) pays a
crypto recipient. Balance: a fresh organization has nothing to pay from.

"503 `ORDERS_TEMPORARILY_UNAVAILABLE` when a network read fails" / "A network read failed; partial lists are
never returned as complete." (retry: as is). The operator makes the network read behind the next
`GET /orders?reference=` of a fresh organization time out (`timeout` on `ordersNetwork`); the target answers
503, or 200 with the complete list if that lookup reads no network; the same read resent then finds the payout.
The payout provider is made unavailable the same way (`unavailable` on `payoutAccountProvider`).
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from payconform.suite import Contract, expect, expect_error, expect_status

from .._support.payouts import (
    create_payout,
    crypto_payout_body,
    payout_body,
    payouts_with_reference,
    scenario_destination,
    scenario_payout_body,
)
from .._support.profile import success
from .._support.recipients import add_method_body, create_recipient, method_ids, read_recipient
from .._support.scenarios import mismatch_unless_reached
from .._support.types import Unique

ORDERS_NETWORK = "ordersNetwork"  # operator fault pseudo-operation: the network read of a lookup by reference
ACCOUNT_PROVIDER = "payoutAccountProvider"  # operator fault pseudo-operation: who registers payout accounts


@pytest.mark.smoke
@pytest.mark.req("ORDER-UNAVAILABLE", "ERR-ORDERS-TEMPORARILY-UNAVAILABLE")
@pytest.mark.needs("operator", "profile")
def test_a_failed_network_read_is_503_never_a_partial_list(fresh_org, operator, contract: Contract,
                                                           unique: Unique) -> None:
    """Two payouts share a reference; the network read behind the lookup does not answer (the operator breaks
    it): 503 ORDERS_TEMPORARILY_UNAVAILABLE, never a partial list (a 200 must list both payouts: a lookup that
    reads no network is complete); resent as is, it finds both."""
    org = fresh_org()
    reference = unique("ref")
    payout_ids = {create_payout(org.api, contract, unique, reference=reference).json["payoutId"] for _ in range(2)}
    operator.inject_fault(org.org_id, ORDERS_NETWORK, "timeout")
    failed = org.api.op("listOrders", params={"reference": reference})
    if failed.status == 200:
        listed = [p.get("payoutId") for p in failed.json.get("data") or []]
        expect(payout_ids <= set(listed), f"GET /orders?reference= answered 200 with {listed} while its network read "
               f"did not answer: a partial list presented as complete (accepted: 503 "
               f"ORDERS_TEMPORARILY_UNAVAILABLE, or 200 listing {sorted(payout_ids)})", failed)
    else:
        expect_error(failed, 503, "ORDERS_TEMPORARILY_UNAVAILABLE", "GET /orders?reference= while a network read "
                     "fails (or 200 with the complete list)")
    found = {p.get("payoutId") for p in payouts_with_reference(org.api, contract, reference)}
    expect(found == payout_ids, f"resent as is, the lookup finds {sorted(found)}, not {sorted(payout_ids)}")


@pytest.mark.smoke
@pytest.mark.req("AUTH-CRYPTO-DISABLED", "ERR-CRYPTO-PAYOUTS-DISABLED")
@pytest.mark.needs("profile")
def test_a_key_without_crypto_payouts_cannot_pay_crypto(api, contract: Contract, unique: Unique) -> None:
    """A crypto payout with a read+write key: 400 CRYPTO_PAYOUTS_DISABLED, and nothing sent."""
    body = crypto_payout_body(api, contract, unique)
    expect_error(api.op("createPayout", json=body), 400, "CRYPTO_PAYOUTS_DISABLED",
                 "a crypto payout with a key lacking crypto_payouts")
    found = payouts_with_reference(api, contract, body["reference"])
    expect(not found, f"the refused crypto payout was sent: {[p.get('payoutId') for p in found]}")


@pytest.mark.req("AUTH-CRYPTO-SCOPE")
@pytest.mark.needs("crypto_key", "profile")
def test_a_crypto_payouts_key_pays_a_crypto_recipient(api_as, contract: Contract, unique: Unique) -> None:
    """The same crypto payout with a key holding `crypto_payouts` is accepted."""
    api = api_as("crypto_key")
    ex = api.op("createPayout", json=crypto_payout_body(api, contract, unique))
    expect_status(ex, success(contract, "createPayout"), "a crypto payout with a crypto_payouts key")


@pytest.mark.smoke
@pytest.mark.req("ERR-INSUFFICIENT-BALANCE")
@pytest.mark.needs("operator", "profile")
def test_a_payout_above_the_balance_is_refused(fresh_org, contract: Contract, unique: Unique) -> None:
    """With the balance topped up once, a payout of more than the top-up: 400 INSUFFICIENT_BALANCE, nothing sent."""
    org = fresh_org()
    destination = scenario_destination(org.api, contract, unique)
    top_up = contract.profile["sandbox"]["top_up"]["amount"]
    body = payout_body(contract, destination, unique("ref"), sourceAmount=str(Decimal(top_up) + 1))
    expect_error(org.api.op("createPayout", json=body), 400, "INSUFFICIENT_BALANCE", "a payout above the balance")
    expect(not payouts_with_reference(org.api, contract, body["reference"]), "the refused payout was sent")


def refusals(contract: Contract) -> dict:
    """The sandbox inputs the network refuses before submission (profile `sandbox.network_refusals`)."""
    return contract.profile["sandbox"]["network_refusals"]


@pytest.mark.smoke
@pytest.mark.req("ERR-PROVIDER-REJECTED")
@pytest.mark.needs("profile")
def test_below_the_corridor_minimum_the_network_refuses(api, contract: Contract, unique: Unique) -> None:
    """A payout below the corridor minimum (profile): 400 PROVIDER_REJECTED, nothing sent."""
    case = refusals(contract)["below_minimum"]
    body = payout_body(contract, scenario_destination(api, contract, unique), unique("ref"),
                       sourceAmount=case["sourceAmount"])
    expect_error(api.op("createPayout", json=body), 400, "PROVIDER_REJECTED",
                 f"a payout of {case['sourceAmount']}, below the corridor minimum")
    expect(not payouts_with_reference(api, contract, body["reference"]), "the refused payout was sent")


@pytest.mark.smoke
@pytest.mark.req("ERR-PAYOUT-LIMIT-EXCEEDED")
@pytest.mark.needs("operator", "profile")
def test_over_the_single_payout_limit(fresh_org, operator, contract: Contract, unique: Unique) -> None:
    """With no approval threshold, a payout over the single limit (profile): 422 PAYOUT_LIMIT_EXCEEDED whose
    message names the limit ("named in the message"); nothing sent. The wording is not stable, so the limit may
    be named by a word (single, daily, end user) or by the profile's figure for it, in `detail` or
    `resolution`."""
    case = refusals(contract)["over_single_limit"]
    org = fresh_org()
    operator.set_approval_policy(org.org_id, threshold=None)
    body = payout_body(contract, scenario_destination(org.api, contract, unique), unique("ref"),
                       sourceAmount=case["sourceAmount"])
    err = expect_error(org.api.op("createPayout", json=body), 422, "PAYOUT_LIMIT_EXCEEDED",
                       f"a payout of {case['sourceAmount']}, over the single payout limit")
    message = " ".join(str(err[f]) for f in ("detail", "resolution") if isinstance(err.get(f), str))
    named = limit_named(message, case.get("limit"))
    expect(named, f"neither `detail` {err.get('detail')!r} nor `resolution` {err.get('resolution')!r} names the "
                  "limit (accepted: a word naming the single, daily or per-end-user limit, or the limit's figure "
                  f"{case.get('limit')!r}, profile entry `sandbox.network_refusals.over_single_limit.limit`)")
    expect(not payouts_with_reference(org.api, contract, body["reference"]),
           f"the refused payout (its message naming the limit by {named}) was sent")


LIMIT_WORDS = ("single", "daily", "end-user", "end user", "per-payout", "per payout")
FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?")


def limit_named(message: str, limit: str | None) -> str:
    """How `message` names a payout limit: by a word for it, or by its figure (`limit`, written with or without
    thousands separators and decimal places); "" when it does not."""
    lowered = message.lower()
    word = next((w for w in LIMIT_WORDS if w in lowered), None)
    if word:
        return f"the word {word!r}"
    figures = {Decimal(f.replace(",", "")) for f in FIGURE.findall(message)}
    if limit is not None and Decimal(str(limit)) in figures:
        return f"its figure {limit}"
    return ""


@pytest.mark.smoke
@pytest.mark.req("ERR-PAYOUT-REFUSED")
@pytest.mark.needs("profile")
def test_a_refused_recipient_is_refused_for_good(api, contract: Contract, unique: Unique) -> None:
    """A payout to the sandbox's refused recipient (profile): 422 PAYOUT_REFUSED, and again when resent
    (final), nothing sent. A first payout accepted where one selected the other way (`scenarios`) is refused
    is the profile's mismatch (`sandbox.payout_scenarios.select_by`), not the target's."""
    scenario = refusals(contract)["refused_recipient"]["selector"].split()[-1]

    def refused(way: str) -> bool:
        return api.op("createPayout", json=scenario_payout_body(api, contract, unique, scenario, way=way)).status >= 400

    for attempt in ("first", "second"):
        body = scenario_payout_body(api, contract, unique, scenario)
        ex = api.op("createPayout", json=body)
        if attempt == "first":
            mismatch_unless_reached(contract, scenario, ex.status >= 400, f"was answered {ex.status}", refused, ex)
        expect_error(ex, 422, "PAYOUT_REFUSED", f"the {attempt} payout to a recipient the network refuses")
        expect(not payouts_with_reference(api, contract, body["reference"]), "the refused payout was sent")


@pytest.mark.smoke
@pytest.mark.req("ERR-WALLET-NOT-PROVISIONED")
@pytest.mark.needs("operator", "profile")
def test_no_wallet_no_wallet_payout(fresh_org, contract: Contract, unique: Unique) -> None:
    """An organization without an EVM wallet (profile `sandbox.wallet`) paying a wallet recipient with a
    `crypto_payouts` key: 400 WALLET_NOT_PROVISIONED, nothing sent."""
    feature = contract.profile["sandbox"]["wallet"]["unprovisioned_feature"]
    org = fresh_org(features=("developer", "mass_payouts", feature), scopes=("read", "write", "crypto_payouts"))
    body = crypto_payout_body(org.api, contract, unique)
    expect_error(org.api.op("createPayout", json=body), 400, "WALLET_NOT_PROVISIONED",
                 "a wallet payout from an organization without an EVM wallet")
    expect(not payouts_with_reference(org.api, contract, body["reference"]), "the refused payout was sent")


@pytest.mark.smoke
@pytest.mark.req("ERR-PAYOUT-ACCOUNT-PROVIDER-UNAVAILABLE", "RCP-ADD-METHOD-PROVIDER-UNAVAILABLE")
@pytest.mark.needs("operator")
def test_provider_registration_unavailable_saves_nothing(fresh_org, operator, contract: Contract,
                                                        unique: Unique) -> None:
    """Adding a method while the provider cannot register accounts (the operator makes it unavailable): 503
    PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE, the recipient's methods unchanged; retried as is (same key and
    body), the method is added. A target that answers 201 registers the account after answering, so the
    provider was never asked during the request: the test skips there."""
    org = fresh_org()
    recipient = create_recipient(org.api, contract, unique)
    body, key = add_method_body(contract), unique("key")
    operator.inject_fault(org.org_id, ACCOUNT_PROVIDER, "unavailable")
    first = org.api.op("addBeneficiaryMethod", recipientId=recipient["id"], json=body, idempotency_key=key)
    if first.status == 201:
        pytest.skip("adding a method answered 201 while the payout provider was unavailable: the target registers "
                    "the account after answering, so registration never failed during the request")
    expect_error(first, 503, "PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE", "adding a method while registration is unavailable")
    expect(method_ids(read_recipient(org.api, recipient["id"])) == method_ids(recipient),
           "the method refused with 503 was saved")
    added = org.api.op("addBeneficiaryMethod", recipientId=recipient["id"], json=body, idempotency_key=key)
    expect_status(added, 201, "the same request retried once registration is back")
