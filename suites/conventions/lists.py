"""The lists the suite can fill, and what the spec says of each: shared by the paging and `limit` tests.

A seeder makes `n` rows in the list and returns a marker per row, in creation order (an id, the request id of
an audited call, or a distinctive top-up amount), so a test can find its rows on a page whatever else the
row holds. A list joins the paging and limit tests by adding its seeder to `SEEDS`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from payconform.client import Api
from payconform.contract import Contract

from ..endpoints.factories import (
    create_link,
    create_product,
    create_recipient,
    refused_recipient_update,
    top_up,
)
from ..states.payout_support import create as create_payout

Seeder = Callable[[Api, Contract, Callable[[str], str], int], list[str]]


def _top_ups(api: Api, contract: Contract, unique: Callable[[str], str], n: int) -> list[str]:
    """Top-ups of distinct amounts in [base, base + 1): no amount equals a running total of two or more."""
    base = 100 + secrets.randbelow(900)
    amounts = [f"{base}.{index:02d}" for index in range(1, n + 1)]
    for amount in amounts:
        top_up(api, contract, amount)
    return amounts


def _refused_changes(api: Api, contract: Contract, unique: Callable[[str], str], n: int) -> list[str]:
    return [refused_recipient_update(api, unique).request_id or "" for _ in range(n)]


def _recipients(api: Api, contract: Contract, unique: Callable[[str], str], n: int) -> list[str]:
    return [create_recipient(api, contract, unique)["id"] for _ in range(n)]


def _products(api: Api, contract: Contract, unique: Callable[[str], str], n: int) -> list[str]:
    return [create_product(api, contract, unique)["id"] for _ in range(n)]


def _links(api: Api, contract: Contract, unique: Callable[[str], str], n: int) -> list[str]:
    product = create_product(api, contract, unique)
    return [create_link(api, contract, product["id"])["id"] for _ in range(n)]


def _payouts(api: Api, contract: Contract, unique: Callable[[str], str], n: int) -> list[str]:
    return [create_payout(api, contract, unique).json["payoutId"] for _ in range(n)]


@dataclass(frozen=True)
class Seed:
    """How to fill one list and what the spec says of it."""

    make: Seeder
    newest_first: bool | None = None  # None: the spec orders it by time, direction not shown
    order_req: str | None = None      # the requirement declaring the order; None: order not shown
    refusal_req: str | None = None    # the requirement refusing a foreign cursor; None: not required
    cursor_req: str | None = None     # the requirement making the cursor a row id: inserts cannot shift it
    empty: dict[str, str] = field(default_factory=dict)  # filters under which a fresh organization's list is empty


SEEDS: dict[str, Seed] = {
    "getBalanceHistory": Seed(_top_ups, None, "HIST-ORDER-SETTLEMENT", "HIST-INVALID-QUERY"),
    "listBalanceTransactions": Seed(_top_ups, True, "BTX-NEWEST-FIRST", "BTX-INVALID-QUERY", "BTX-CURSOR-OLDER"),
    "listAuditEvents": Seed(_refused_changes, True, "AUDIT-NEWEST-FIRST", "AUDIT-INVALID-QUERY", "AUDIT-NEWEST-FIRST",
                            empty={"apiKey": "svc_test_" + "0" * 32}),
    "listBeneficiaries": Seed(_recipients),
    "listCheckoutProducts": Seed(_products),
    "listCheckoutLinks": Seed(_links),
    "listPayouts": Seed(_payouts),
}
