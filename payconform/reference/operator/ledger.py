"""Operator actions on an organization's sandbox ledger: what the back office and the payment network do.

A deposit to the funding account arrives pending and completes later; a movement happens on a network whose
balance is not tracked; a hold reserves money; a balance source becomes unreadable; historical balance
transactions are not loaded yet; the own wallet holds tokens (live mode: the sandbox wallet is empty); the
organization holds many more orders (balance history's size limit becomes reachable). The others act on the
sandbox (mode `test`). Each answers JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from ..resources import ledger
from ..core.errors import ApiError
from ..core.validate import Checker
from .endpoint import OperatorRoute, org_of

if TYPE_CHECKING:
    from .server import OperatorServer

MODE = "test"
SOURCES = ("provider", "wallet")
CURRENCIES = ("USD",)
CHAINS, TOKENS = ("ethereum", "polygon", "base", "solana"), ("USDC", "USDT")


def _amount(body: dict[str, Any]) -> tuple[Checker, Any, str]:
    c = Checker(body)
    amount = c.amount("amount", required=True)
    currency = c.string("currency", choices=CURRENCIES) or "USD"
    if amount is not None and amount <= 0:
        c.fail("amount", "must be positive")
    return c, amount, currency


def create_deposit(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{amount, currency?}` -> 201 `{depositId, status: pending}`: nothing moves until it completes."""
    org_id = org_of(ref, request)
    c, amount, currency = _amount(body)
    c.done()
    deposit_id = ledger.create_deposit(ref.store, org_id, MODE, ref.clock.now(org_id), amount, currency)
    return 201, {"depositId": deposit_id, "status": "pending"}


def complete_deposit(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    org_id = org_of(ref, request)
    deposit_id = request.path_params["depositId"]
    if not ledger.complete_deposit(ref.store, org_id, deposit_id, ref.clock.now(org_id)):
        raise ApiError("NOT_FOUND", "No such pending deposit in this organization.")
    return 200, {"depositId": deposit_id, "status": "completed"}


def untracked_movement(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{amount}`: money moved on a network whose balance is not tracked. It adds no entry, and the balance
    history withholds `balanceAfter` from then on."""
    org_id = org_of(ref, request)
    c, _, _ = _amount(body)
    c.done()
    count = int(ledger.flag(ref.store, org_id, MODE, ledger.UNTRACKED) or 0) + 1
    ledger.set_flag(ref.store, org_id, MODE, ledger.UNTRACKED, str(count))
    return 200, {"orgId": org_id, "untrackedMovements": count}


def place_hold(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{amount, currency?}`: a hold reserves that much of the balance (a `hold` balance transaction)."""
    org_id = org_of(ref, request)
    c, amount, currency = _amount(body)
    c.done()
    after = ledger.write(ref.store, org_id, MODE, ref.clock.now(org_id), type="hold", amount=-amount,
                         currency=currency)
    return 201, {"orgId": org_id, "available": str(after)}


def set_source(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{readable: bool}` for source `provider` or `wallet`: an unreadable source is named in `unavailable`."""
    org_id = org_of(ref, request)
    source = request.path_params["source"]
    if source not in SOURCES:
        raise ApiError("NOT_FOUND", f"No balance source {source!r}; sources are {', '.join(SOURCES)}.")
    c = Checker(body)
    readable = c.boolean("readable", required=True)
    c.done()
    ledger.set_flag(ref.store, org_id, MODE, f"unreadable:{source}", None if readable else "1")
    return 200, {"source": source, "readable": readable}


def set_loaded(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{loaded: bool}`: before historical rows are loaded, balance transactions answer an empty page."""
    org_id = org_of(ref, request)
    c = Checker(body)
    loaded = c.boolean("loaded", required=True)
    c.done()
    ledger.set_flag(ref.store, org_id, MODE, ledger.UNLOADED, None if loaded else "1")
    return 200, {"orgId": org_id, "loaded": loaded}


def set_wallet(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{chain, currency: USDC|USDT, amount, mode?: "live"}`: what the own wallet holds on that chain (the
    sandbox wallet stays empty, so the figure is for live mode unless `mode` says otherwise)."""
    org_id = org_of(ref, request)
    c = Checker(body)
    chain = c.string("chain", required=True, choices=CHAINS)
    currency = c.string("currency", required=True, choices=TOKENS)
    amount = c.amount("amount", required=True, places=6)
    mode = c.string("mode", choices=("test", "live")) or "live"
    c.done()
    ledger.set_flag(ref.store, org_id, mode, f"wallet:{chain}:{currency}", str(amount))
    return 200, {"chain": chain, "currency": currency, "amount": str(amount), "mode": mode}


def seed_orders(ref: OperatorServer, request: Request, body: dict[str, Any]) -> tuple[int, Any]:
    """`{count}`: the organization holds `count` more orders (sandbox mode)."""
    org_id = org_of(ref, request)
    c = Checker(body)
    count = c.integer("count", required=True, low=0, high=10_000_000)
    c.done()
    ledger.seed_orders(ref.store, org_id, MODE, count or 0)
    return 200, {"orgId": org_id, "seededOrders": count}


ROUTES = [
    OperatorRoute("/orgs/{orgId}/deposits", create_deposit, "POST"),
    OperatorRoute("/orgs/{orgId}/deposits/{depositId}/complete", complete_deposit, "POST"),
    OperatorRoute("/orgs/{orgId}/ledger/untracked-movements", untracked_movement, "POST"),
    OperatorRoute("/orgs/{orgId}/ledger/holds", place_hold, "POST"),
    OperatorRoute("/orgs/{orgId}/balance-sources/{source}", set_source, "PUT"),
    OperatorRoute("/orgs/{orgId}/ledger/loaded", set_loaded, "PUT"),
    OperatorRoute("/orgs/{orgId}/wallet", set_wallet, "PUT"),
    OperatorRoute("/orgs/{orgId}/orders/seed", seed_orders, "POST"),
]
