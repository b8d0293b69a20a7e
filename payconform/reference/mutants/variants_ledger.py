"""Tolerated variants of the balance and ledger reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import variant
from .rewrites import rewrite_replies

if TYPE_CHECKING:
    from ..operation import Reply
    from ..reference import Reference


def _null_when_withheld(reply: Reply) -> Reply:
    entries = reply.body.get("entries") if isinstance(reply.body, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        entry.setdefault("balanceAfter", None)
    return reply


@variant("balance-after-null",
         doc="A withheld `balanceAfter` is written as null rather than left out: '`balanceAfter` is then withheld "
             "under a `note`' does not say how.")
def _(ref: Reference) -> None:
    rewrite_replies(ref, "getBalanceHistory", _null_when_withheld)
