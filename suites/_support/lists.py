"""The lists the suite can fill, and what the spec says of each: shared by the paging, `limit` and ledger
tests.

A seeder makes `n` rows in the list and returns a marker per row, in creation order (an id, the request id of
an audited call, or a distinctive top-up amount), so a test can find its rows on a page whatever else the
row holds. A list joins the paging and limit tests by adding its seeder to `SEEDS`. A test that needs a list
holding exactly its rows fills one in a fresh organization (`fresh_list`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from payconform.client import Api
from payconform.contract import Contract
from payconform.expect import expect, expect_status
from payconform.operator import OrgHandle
from payconform.paging import Page, Pager

from .approvals import hold
from .balance import top_up
from .batches import create as create_run
from .batches import profile as batch_profile
from .checkout import create_link, sent_link
from .payments import simulate
from .payouts import create_payout
from .products import create_product
from .profile import items
from .recipients import create_recipient, refused_recipient_update
from .types import Unique

Seeder = Callable[[Api, Contract, Unique, int], list[str]]


def _top_ups(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    """Top-ups of distinct amounts in [base, base + 1): no amount equals a running total of two or more."""
    base = 100 + secrets.randbelow(900)
    amounts = [f"{base}.{index:02d}" for index in range(1, n + 1)]
    for amount in amounts:
        top_up(api, contract, amount)
    return amounts


def _refused_changes(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [refused_recipient_update(api, unique).request_id or "" for _ in range(n)]


def _recipients(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_recipient(api, contract, unique)["id"] for _ in range(n)]


def _products(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_product(api, contract, unique)["id"] for _ in range(n)]


def _links(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    product = create_product(api, contract, unique)
    return [create_link(api, contract, product["id"])["id"] for _ in range(n)]


def _payouts(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_payout(api, contract, unique).json["payoutId"] for _ in range(n)]


ORDERS_REFERENCE = "pc-paging-orders"  # every seeded order of a (fresh) organization shares this caller reference


def _orders(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_payout(api, contract, unique, reference=ORDERS_REFERENCE).json["payoutId"] for _ in range(n)]


def _runs(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [create_run(api, contract, unique).id for _ in range(n)]


def _run_items(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    """One run of `n` lines (a run's items are fixed when it is made); markers are the lines' references."""
    return create_run(api, contract, unique, n=n).references


def _only_run(api: Api, contract: Contract) -> dict[str, str]:
    """The path of the items list: the batch id of the organization's one run (a fresh organization's)."""
    ex = api.op("listPayoutBatches")
    expect_status(ex, 200, "listing the organization's runs")
    runs = items(contract, "listPayoutBatches", ex)
    expect(len(runs) == 1, f"setup: the organization should hold one run, it lists {len(runs)}", ex)
    return {"batchId": str(runs[0].get(batch_profile(contract)["id_field"]))}


def _only_link(api: Api, contract: Contract) -> dict[str, str]:
    """The path of the payments list: the organization's one link (a fresh organization's), published with no
    payment when it has none yet, so that an empty list can be read too."""
    ex = api.op("listCheckoutLinks")
    expect_status(ex, 200, "listing the organization's links")
    links = items(contract, "listCheckoutLinks", ex)
    expect(len(links) <= 1, f"setup: the organization should hold one link, it lists {len(links)}", ex)
    if links:
        return {"linkId": str(links[0]["id"])}
    return {"linkId": sent_link(api, contract, lambda prefix: f"{prefix}-{secrets.token_hex(6)}")["id"]}


def _payments(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    link_id = _only_link(api, contract)["linkId"]
    answers = [simulate(api, link_id, unique("pref")) for _ in range(n)]
    return [expect_status(ex, 200, "simulating a payment on the link").json["id"] for ex in answers]


def _approvals(api: Api, contract: Contract, unique: Unique, n: int) -> list[str]:
    return [hold(api, contract, unique).approval_id for _ in range(n)]


@dataclass(frozen=True)
class Seed:
    """How to fill one list and what the spec says of it."""

    make: Seeder
    newest_first: bool | None = None  # None: the spec orders it by time, direction not shown
    order_req: str | None = None      # the requirement declaring the order; None: order not shown
    refusal_req: str | None = None    # the requirement refusing a foreign cursor; None: not required
    cursor_req: str | None = None     # the requirement making the cursor a row id: inserts cannot shift it
    empty: dict[str, str] = field(default_factory=dict)  # filters under which a fresh organization's list is empty
    params: dict[str, str] = field(default_factory=dict)  # query the list always needs (e.g. a required filter)
    path: Callable[[Api, Contract], dict[str, str]] | None = None  # path parameters, found once the list is filled
    grows: bool = True  # rows can be added to the filled list (a run's items cannot)
    refusal_types: frozenset[str] = frozenset({"VALIDATION_ERROR"})  # error types the route's row allows its 400
    tie_rule: bool = True  # the spec says how rows of one instant are ordered ("Newest first" alone does not)

    def pager(self, api: Api, contract: Contract, op_id: str, params: dict[str, str] | None = None) -> Pager:
        """The list of `op_id` in `api`'s organization (filled first when it has a `path`), with `params`."""
        path = self.path(api, contract) if self.path else {}
        return Pager(api, contract, op_id, params={**self.params, **(params or {})}, **path)


SEEDS: dict[str, Seed] = {
    "getBalanceHistory": Seed(_top_ups, None, "HIST-ORDER-SETTLEMENT", "HIST-INVALID-QUERY"),
    "listBalanceTransactions": Seed(_top_ups, True, "BTX-NEWEST-FIRST", "BTX-INVALID-QUERY", "BTX-CURSOR-OLDER"),
    "listAuditEvents": Seed(_refused_changes, True, "AUDIT-NEWEST-FIRST", "AUDIT-INVALID-QUERY", "AUDIT-NEWEST-FIRST",
                            empty={"apiKey": "svc_test_" + "0" * 32},
                            refusal_types=frozenset({"VALIDATION_ERROR", "BAD_REQUEST"})),  # row: "400 for ..."
    "listBeneficiaries": Seed(_recipients),
    "listCheckoutProducts": Seed(_products),
    "listCheckoutLinks": Seed(_links),
    "listPayouts": Seed(_payouts),
    "listOrders": Seed(_orders, params={"reference": ORDERS_REFERENCE}),
    "listPayoutBatches": Seed(_runs),
    "listPayoutBatchItems": Seed(_run_items, path=_only_run, grows=False, empty={"status": "create_failed"}),
    "listCheckoutPayments": Seed(_payments, True, "PAY-LIST", path=_only_link, tie_rule=False),
    "listPayoutApprovals": Seed(_approvals),
}


def fresh_list(fresh_org: Callable[..., OrgHandle], contract: Contract, op_id: str,
               fill: Callable[[Api], Any]) -> tuple[OrgHandle, Pager]:
    """A fresh organization whose `op_id` list holds exactly the rows `fill` makes there, and its pager."""
    handle = fresh_org()
    fill(handle.api)
    return handle, Pager(handle.api, contract, op_id)


def topped_up(fresh_org: Callable[..., OrgHandle], contract: Contract, op_id: str,
              *amounts: str) -> tuple[OrgHandle, Pager]:
    """A fresh organization topped up by each of `amounts` in turn, and the pager of its `op_id` list."""
    return fresh_list(fresh_org, contract, op_id, lambda api: [top_up(api, contract, a) for a in amounts])


def seeded(fresh_org: Callable[..., OrgHandle], contract: Contract, unique: Unique, op_id: str, rows: int) -> Pager:
    """The pager of `op_id` in a fresh organization whose list holds `rows` rows of its `SEEDS` seeder."""
    return fresh_list(fresh_org, contract, op_id, lambda api: SEEDS[op_id].make(api, contract, unique, rows))[1]


def filtered_page(pager: Pager, what: str, **params: str) -> Page:
    """The first page of `pager`'s list with the query `params` added (what a filter test reads)."""
    return pager.parse(pager.request(extra=list(params.items())), f"{what} {params}")
