"""Mutants of the Resources part for balances, history entries, balance transactions and audit events.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from ...core.clock import iso
from ...core.operation import Call, Reply
from ..patching import Handler, around
from ..registry import mutant
from ..support.ledger import AUDIT, BTX, rewrite_balance, rewrite_entries, unlisted

if TYPE_CHECKING:
    from ...reference import Reference


def _rewrite_audit_rows(ref: Reference, change: Any) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            change(row)
        return reply


@mutant("audit-row-twice", reqs=["AUDIT-ROW-PER-MUTATION"], doc="Every audited mutation writes two rows.")
def audit_row_twice(ref: Reference) -> None:
    record = ref.audit.record

    def twice(**row: Any) -> None:
        record(**row)
        record(**row)

    ref.audit.record = twice  # type: ignore[method-assign]


@mutant("audit-refused-not-recorded", reqs=["AUDIT-REFUSED-RECORDED"],
        doc="A refused mutation leaves no audit row; only successes are recorded.")
def audit_refused_not_recorded(ref: Reference) -> None:
    record = ref.audit.record

    def successes_only(**row: Any) -> None:
        if row.get("outcome") != "refused":
            record(**row)

    ref.audit.record = successes_only  # type: ignore[method-assign]


@mutant("audit-row-without-request-id", reqs=["AUDIT-FIELDS"], doc="Audit rows leave out `requestId`.")
def audit_row_without_request_id(ref: Reference) -> None:
    _rewrite_audit_rows(ref, lambda row: row.pop("requestId", None))


@mutant("audit-both-actors", reqs=["AUDIT-ACTOR-EXACTLY-ONE"],
        doc="API-key audit rows also carry an `actorUserId`, so both actor fields are set.")
def audit_both_actors(ref: Reference) -> None:
    _rewrite_audit_rows(ref, lambda row: row.update(actorUserId=row.get("actorUserId") or "user-1"))


@mutant("balance-without-unavailable", reqs=["BAL-FIELDS"], doc="GET /balance leaves out `unavailable`.")
def balance_without_unavailable(ref: Reference) -> None:
    rewrite_balance(ref, lambda body: body.pop("unavailable", None))


@mutant("balance-ledger-summed", reqs=["BAL-LEDGER-NOT-SUMMED"],
        doc="`balances` adds the `ledger` figure to the provider figure.")
def balance_ledger_summed(ref: Reference) -> None:
    def summed(body: dict[str, Any]) -> None:
        amount = Decimal(body["provider"][0]["amount"]) + Decimal(body["ledger"][0]["amount"])
        body["balances"] = [{"currency": body["provider"][0]["currency"], "amount": f"{amount:.2f}"}]

    rewrite_balance(ref, summed)


@mutant("btx-id-prefixed", reqs=["BTX-ID-NUMERIC"], doc="Balance transaction ids read `btx_<n>`, not numeric-looking.")
def btx_id_prefixed(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            row["id"] = "btx_" + row["id"]
        return reply


@mutant("btx-net-missing", reqs=["BTX-NET"], doc="Balance transaction rows leave out `net` although the fee is known.")
def btx_net_missing(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            row.pop("net", None)
        return reply


@mutant("btx-net-unsigned", reqs=["BTX-NET"], doc="`net` is written without its sign: an outgoing row's `net` is positive.")
def btx_net_unsigned(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            if row.get("net") is not None:
                row["net"] = f"{abs(Decimal(row['net'])):.2f}"
        return reply


@mutant("history-without-hasmore", reqs=["HIST-PAGE-FIELDS"], doc="Balance history pages leave out `hasMore`.")
def history_without_hasmore(ref: Reference) -> None:
    rewrite_entries(ref, lambda body: body.pop("hasMore", None))


@mutant("history-balance-after-stale", reqs=["HIST-BALANCE-AFTER-RECONCILES"],
        doc="`balanceAfter` is published one unit above the running total, so it does not reconcile.")
def history_balance_after_stale(ref: Reference) -> None:
    def stale(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            entry["balanceAfter"] = f"{Decimal(entry['balanceAfter']) + 1:.2f}"

    rewrite_entries(ref, stale)


@mutant("history-balance-after-largest-last", reqs=["HIST-BALANCE-AFTER-RECONCILES"],
        doc="`balanceAfter` values are published in rising order, so after a debit the newest entry shows the largest "
            "running total, not the balance (the balance still among them).")
def history_balance_after_largest_last(ref: Reference) -> None:
    def rising(body: dict[str, Any]) -> None:
        shown = [e for e in body["entries"] if e.get("balanceAfter") is not None]
        for entry, value in zip(shown, sorted((e["balanceAfter"] for e in shown), key=Decimal)):
            entry["balanceAfter"] = value

    rewrite_entries(ref, rising)


@mutant("btx-return-typed-refund", reqs=["BTX-TYPES-SEEN"],
        doc="A payout's money coming back is a balance transaction of type `refund`, not `payout_return`.")
def btx_return_typed_refund(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            if row["type"] == "payout_return":
                row["type"] = "refund"
        return reply


@mutant("btx-returns-not-listed", reqs=["BTX-COVERAGE"],
        doc="Balance transactions leave out the rows of payouts returned or failed with money coming back.")
def btx_returns_not_listed(ref: Reference) -> None:
    unlisted(ref, ("payout_return",))


@mutant("history-note-missing", reqs=["HIST-NOTE"], doc="Balance history withholds `balanceAfter` without a `note`.")
def history_note_missing(ref: Reference) -> None:
    rewrite_entries(ref, lambda body: body.pop("note", None))


@mutant("audit-retention-one-year", reqs=["AUDIT-RETENTION", "AUDIT-RETENTION-LIMIT"],
        doc="Audit rows older than one year are no longer listed (retention is five years).")
def audit_retention_one_year(ref: Reference) -> None:
    @around(ref, AUDIT)
    def list_audit_events(original: Handler, call: Call) -> Reply:
        reply = original(call)
        cutoff = iso(call.now - timedelta(days=365))
        reply.body["data"] = [row for row in reply.body["data"] if row["createdAt"] >= cutoff]
        return reply


@mutant("wallet-priced", reqs=["BAL-WALLET-FACE-VALUE"],
        doc="Wallet stablecoins are listed at a market price (0.9990 per token), not at face value.")
def wallet_priced(ref: Reference) -> None:
    def priced(body: dict[str, Any]) -> None:
        for row in body["wallet"]:
            row["amount"] = str(Decimal(row["amount"]) * Decimal("0.9990"))

    rewrite_balance(ref, priced)


@mutant("unavailable-not-named", reqs=["BAL-UNAVAILABLE-NAMES-SOURCE"],
        doc="GET /balance leaves `unavailable` empty although a source could not be read.")
def unavailable_not_named(ref: Reference) -> None:
    rewrite_balance(ref, lambda body: body.update(unavailable=[]))


@mutant("balance-sum-ignores-wallet", reqs=["BAL-BALANCES-SUM"],
        doc="`balances` repeats the provider figures and leaves the wallet's tokens out of the sum.")
def balance_sum_ignores_wallet(ref: Reference) -> None:
    rewrite_balance(ref, lambda body: body.update(balances=[dict(row) for row in body["provider"]]))


@mutant("btx-balance-after-renamed", reqs=["BTX-FIELDS"],
        doc="Balance transaction rows carry their running total as `runningBalance`, not `balanceAfter`.")
def btx_balance_after_renamed(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            row["runningBalance"] = row.pop("balanceAfter", None)
        return reply


@mutant("btx-order-id-missing", reqs=["BTX-FIELDS"],
        doc="Balance transaction rows leave out `orderId`; a payout's rows are found by the filter but do not name it.")
def btx_order_id_missing(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        for row in reply.body["data"]:
            row.pop("orderId", None)
        return reply


@mutant("history-status-lowercase", reqs=["HIST-ENTRY-TYPE-STATUS"],
        doc="Balance history entries spell `status` in lower case (`completed`, `debited`), as payouts spell theirs.")
def history_status_lowercase(ref: Reference) -> None:
    def lowered(body: dict[str, Any]) -> None:
        for entry in body["entries"]:
            entry["status"] = str(entry["status"]).lower()

    rewrite_entries(ref, lowered)


@mutant("audit-cancel-not-recorded", reqs=["AUDIT-ROW-PER-MUTATION"],
        doc="Canceling a payout writes no audit row; only its creation is audited.")
def audit_cancel_not_recorded(ref: Reference) -> None:
    record = ref.audit.record

    def creations_only(**row: Any) -> None:
        if row.get("action") != "payout.cancel":
            record(**row)

    ref.audit.record = creations_only  # type: ignore[method-assign]


@mutant("audit-row-without-actor", reqs=["AUDIT-FIELDS"],
        doc="API-key audit rows leave out `apiKeyPrefix`, so they name no actor at all.")
def audit_row_without_actor(ref: Reference) -> None:
    _rewrite_audit_rows(ref, lambda row: row.pop("apiKeyPrefix", None))


@mutant("balance-without-empty-wallet", reqs=["BAL-FIELDS"],
        doc="GET /balance leaves out `wallet` while the own wallet holds nothing, as in the sandbox.")
def balance_without_empty_wallet(ref: Reference) -> None:
    rewrite_balance(ref, lambda balance: balance.pop("wallet") if not balance.get("wallet") else None)


@mutant("wallet-usdt-unlisted", reqs=["BAL-WALLET-FACE-VALUE"],
        doc="The own wallet's USDT is left out of `wallet` (and of `balances`); only its USDC is listed.")
def wallet_usdt_unlisted(ref: Reference) -> None:
    def usdc_only(balance: dict[str, Any]) -> None:
        for name in ("wallet", "balances"):
            balance[name] = [row for row in balance[name] if row["currency"] != "USDT"]

    rewrite_balance(ref, usdc_only)


@mutant("history-type-uppercase", reqs=["HIST-ENTRY-TYPE-STATUS"],
        doc="Balance history entries spell `type` in upper case (`FUNDING`, `PAYOUT`), as their statuses are spelled.")
def history_type_uppercase(ref: Reference) -> None:
    def raised(page: dict[str, Any]) -> None:
        for entry in page["entries"]:
            entry["type"] = str(entry["type"]).upper()

    rewrite_entries(ref, raised)


@mutant("btx-funding-not-listed", reqs=["BTX-COVERAGE"],
        doc="Balance transactions leave out the rows of funding coming in; only money going out and back is listed.")
def btx_funding_not_listed(ref: Reference) -> None:
    unlisted(ref, ("funding",))
