"""Endpoints > Payout operations: pricing a payout and sending the quote (`pricePayout`, `sendPayout`), and
the disclosure they carry.

"`RegEDisclosure`: `kind` (`prepayment` or `receipt`), `estimated`, `lines` (each with `sign` `+` or `-`),
`otherFeesDisclaimer`." Which answers carry one is not shown: the profile (`sandbox.pricing.disclosure`)
reads it on the quote and on the send answer, so both are checked there.
"""

from __future__ import annotations

from typing import Any

import pytest

from payconform.suite import Contract, Exchange, expect, expect_status

from .._support.payouts import scenario_destination
from .._support.pricing import pricing, quote, send
from .._support.profile import success
from .._support.types import Unique


def expect_rege(ex: Exchange, disclosure: Any, what: str) -> None:
    """`disclosure` has the RegEDisclosure fields, with the values the spec lists for `kind` and `sign`."""
    expect(isinstance(disclosure, dict), f"{what} carries no RegEDisclosure object (got {disclosure!r})", ex)
    expect(disclosure.get("kind") in ("prepayment", "receipt"),
           f"{what}: the disclosure's `kind` is {disclosure.get('kind')!r}, not prepayment or receipt", ex)
    expect("estimated" in disclosure, f"{what}: the disclosure has no `estimated`", ex)
    lines = disclosure.get("lines")
    expect(isinstance(lines, list) and lines, f"{what}: the disclosure's `lines` is {lines!r}, not a list of lines", ex)
    signs = [line.get("sign") if isinstance(line, dict) else line for line in lines]
    expect(all(sign in ("+", "-") for sign in signs), f"{what}: the lines' `sign`s are {signs}, not + or -", ex)
    expect(isinstance(disclosure.get("otherFeesDisclaimer"), str),
           f"{what}: the disclosure's `otherFeesDisclaimer` is {disclosure.get('otherFeesDisclaimer')!r}", ex)


@pytest.mark.req("DISC-REGE-SHAPE")
@pytest.mark.needs("profile")
def test_a_quote_and_its_send_carry_a_rege_disclosure(api, contract: Contract, unique: Unique) -> None:
    """The quote and the answer to sending it each carry a RegEDisclosure of the spec's shape."""
    field = pricing(contract)["disclosure"]
    priced = quote(api, contract, scenario_destination(api, contract, unique))
    expect_rege(priced, priced.json.get(field), "the quote")
    sent = send(api, contract, priced.json, unique("ref"))
    expect_status(sent, success(contract, "sendPayout"), "sending the quote")
    expect_rege(sent, sent.json.get(field), "the answer to sending the quote")
