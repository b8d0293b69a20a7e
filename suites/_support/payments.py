"""Checkout payments simulated on links, forced to an outcome, listed, read and refunded.

The sandbox totals that pick a payment scenario (`.02` settles later, `.04` is charged back) come from the
profile's `sandbox.checkout_payment`, which quotes the spec; the refund amount's field name is the profile's
too. Payment reads are in base units (see `money.base_amount`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_status

from . import runwide
from .checkout import sent_link
from .pool import spread
from .profile import items
from .types import Unique, shared_scope



def example_total(contract: Contract, scenario: str) -> str:
    """A link total for `paid`, `settles_later` or `charged_back` (profile `sandbox.checkout_payment`)."""
    return str(contract.profile["sandbox"]["checkout_payment"]["example_totals"][scenario])


def simulate(api: Api, link_id: str, reference: str, *, client_reference_id: str | None = None,
             **headers_and_kw: Any) -> Exchange:
    """A simulated payment under `reference`, with `clientReferenceId` the reference unless given."""
    return api.op("simulateCheckoutPayment", linkId=link_id,
                  json={"reference": reference, "clientReferenceId": client_reference_id or reference},
                  **headers_and_kw)


REFUSED_PAYMENT = ("BAD_REQUEST", "LINK_EXPIRED")  # a link that cannot take a payment (simulate's row)
SHARED_LINK_PAYMENTS = 25  # payments one shared link takes: a test's own stays on its list's first page (100)


def payment(api: Api, contract: Contract, unique: Unique, total: str = "150.00") -> tuple[str, dict[str, Any]]:
    """(link id, payment): a simulated payment on a sent link priced `total`. A test of a payment only pays the
    link, never changes it, so the run's workers share one link per organization, mode and total (`runwide`,
    which counts the places taken on it): a new one after `SHARED_LINK_PAYMENTS`, or when the link cannot take
    one more (the cap per link and what expires a link are not shown: 400 `BAD_REQUEST` or `LINK_EXPIRED`). A
    test about a link or its list makes its own."""
    scope, name = shared_scope(api), f"payable link priced {total}"

    def place(held: list[Any] | None, full: str | None = None) -> list[Any]:
        """A place on the shared link: a new link when there is none, it is full, or it is `full` (refused)."""
        if held is None or held[1] >= SHARED_LINK_PAYMENTS or held[0] == full:
            held = [sent_link(api, contract, unique, total)["id"], 0]
        return [held[0], held[1] + 1]

    link_id, taken = runwide.update(scope, name, place)
    ex = simulate(api, link_id, unique("pref"))
    refused = ex.status == 400 and isinstance(ex.json, dict) and ex.json.get("type") in REFUSED_PAYMENT
    if refused and taken > 1:  # a link that took payments before is full or expired: the next one
        link_id = runwide.update(scope, name, lambda held: place(held, full=link_id))[0]
        ex = simulate(api, link_id, unique("pref"))
    expect_status(ex, 200, "simulating a payment on a sent link")
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get("id"), str), "the simulated payment has no `id`", ex)
    return link_id, ex.json


CROWDS: list[int] = []  # the payments each test of the run that reads the crowded link needs (`plan_crowds`)


def plan_crowds(items: Iterable[Any]) -> None:
    """What the run's tests need of the crowded link: the `crowds(n)` marker of each test that will run. A run
    that leaves the clamp's test out (one key, not deep: `many_requests`) makes 21 payments, not 101."""
    CROWDS[:] = [int(m.args[0]) for item in items for m in item.iter_markers("crowds")]


def crowded_link(api: Api, contract: Contract, unique: Unique, n: int, shows: str) -> tuple[str, int]:
    """(id, payments) of a sent link holding at least `n` simulated payments. The `limit` tests only read it, so
    the run makes one per organization and mode (`runwide`) with the payments the most demanding of them needs
    (`plan_crowds`), never adding to it after: a test reading its pages while another worker added payments would
    see them move. Its tests run last (`fill`), so that the events of its payments hold up no other test's
    deliveries. The cap on simulated payments per link is not shown: a target whose cap is below `n` cannot
    show `shows`, and the test is skipped. The payments go out over the key pool where there is one
    (`pool.spread`)."""
    size = max([n, *CROWDS])

    def make() -> list[Any]:
        link_id, held = sent_link(api, contract, unique)["id"], 0
        with spread(api) as client:  # with a key pool, not a minute of one key's window
            while held < size:
                ex = simulate(client(), link_id, unique("pref"))
                if ex.status == 400 and isinstance(ex.json, dict) and ex.json.get("type") == "BAD_REQUEST":
                    break
                expect_status(ex, 200, "simulating a payment")
                held += 1
        return [link_id, held]

    link_id, held = runwide.shared(shared_scope(api), f"link crowded with {size} payments", make)
    if held < n:
        pytest.skip(f"the target caps simulated payments at {held} per link ('already at the maximum "
                    f"number of simulated payments'), below the {n} that tell {shows} apart")
    return link_id, held


def force(api: Api, payment_id: str, action: str, **kw: Any) -> Exchange:
    return api.op("simulateCheckoutPaymentOutcome", paymentId=payment_id, json={"action": action}, **kw)


SETTLED = ("pending", "paid")  # the one move a payment makes on its own within seconds (the sandbox's `.02`)
SETTLE_TRIES = 3  # payments made for a forced outcome that the sandbox settled before the force reached them


def forced(api: Api, contract: Contract, unique: Unique, total: str, action: str) -> tuple[str, dict[str, Any], Exchange]:
    """(link id, payment, the force's answer) of a payment priced `total` forced to `action`. A `.02` payment
    is pending only until it "settles to paid over the next twenty seconds" of real time, so both requests go
    out urgent (`Run.urgent`: the key's next free slot), and a pending one the force found settled already
    (`moved: false`, the payment `paid`: on one key the window may hold a request that long) is made anew, up
    to `SETTLE_TRIES` times; then the test is skipped, saying so."""
    for _ in range(SETTLE_TRIES):
        with api.run.urgent():
            link_id, paid = payment(api, contract, unique, total)
            ex = force(api, paid["id"], action)
        if not (paid.get("status") == "pending" and ex.status == 200 and isinstance(ex.json, dict)
                and ex.json.get("moved") is False
                and (ex.json.get("status") or read_payment(api, contract, link_id, paid["id"]).get("status")) == "paid"):
            return link_id, paid, ex
    pytest.skip(f"{SETTLE_TRIES} pending payments had settled to `paid` before the forced `{action}` reached them "
                "(the key's window held the requests past the twenty seconds a `.02` payment stays pending): "
                "not judged in this run")


def list_payments(api: Api, link_id: str, **params: Any) -> Exchange:
    ex = api.op("listCheckoutPayments", linkId=link_id, params=params or None)
    expect_status(ex, 200, f"listing the payments of a link with {params or 'no parameters'}")
    return ex


def read_payment(api: Api, contract: Contract, link_id: str, payment_id: str) -> dict[str, Any]:
    """The payment as the authoritative read (GET /links/{linkId}/payments) shows it."""
    ex = list_payments(api, link_id, limit="100")
    found = [p for p in page_items(contract, ex) if isinstance(p, dict) and p.get("id") == payment_id]
    expect(len(found) == 1, f"payment {payment_id!r} is listed {len(found)} times on its link", ex)
    return found[0]


def refund_body(contract: Contract, amount_base: str | None) -> dict[str, Any]:
    """The refund body: the profile's amount field (base units), omitted to refund the rest."""
    template = contract.operation("refundCheckoutPayment").get("body") or {"amount": ""}
    field = next(iter(template))
    return {} if amount_base is None else {field: amount_base}


def refund(api: Api, contract: Contract, payment_id: str, amount_base: str | None = None, **kw: Any) -> Exchange:
    return api.op("refundCheckoutPayment", paymentId=payment_id, json=refund_body(contract, amount_base), **kw)


def expect_payment_unchanged(api: Api, contract: Contract, link_id: str, before: dict[str, Any],
                             refusal: Exchange) -> None:
    """The payment read after `refusal` has the `status` and `refundedBase` it had `before`: no money moved. A
    `pending` payment read `paid` has settled on its own (a `.02` payment "settles to paid over the next twenty
    seconds" of real time, which a read on a busy key may outlast): not a move of the refusal's."""
    after = read_payment(api, contract, link_id, before["id"])
    for field in ("status", "refundedBase"):
        if field == "status" and (before.get(field), after.get(field)) == SETTLED:
            continue
        expect(after.get(field) == before.get(field), f"the refusal moved money: `{field}` went from"
               f" {before.get(field)!r} to {after.get(field)!r}", refusal)


def page_items(contract: Contract, ex: Exchange) -> list[dict[str, Any]]:
    """The payments of a `listCheckoutPayments` page (where the profile says the items are)."""
    return items(contract, "listCheckoutPayments", ex)
