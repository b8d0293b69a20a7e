"""Tolerated variants of the hosted payout link: the other answers the spec gives a second submit, and to an
expired link."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ApiError
from . import variant
from .payout_links import refuse_expired
from .rewrites import rewrite_replies

if TYPE_CHECKING:
    from ..operation import Reply
    from ..reference import Reference


def _refuse_resubmit(ref: Reference, refusal: Callable[[], ApiError]) -> None:
    """A second submit, which the reference answers with the original payout `already_submitted`, is refused."""
    def refuse(reply: Reply) -> Reply:
        if isinstance(reply.body, dict) and reply.body.get("status") == "already_submitted":
            raise refusal()
        return reply

    rewrite_replies(ref, "submitPayoutLink", refuse)


@variant("spent-link-404",
         doc="A second submit of a spent link answers 404 NOT_FOUND: '404 `NOT_FOUND` (expired, spent, forged or "
             "unknown token)'; 'A 404 on a payout link route covers expired, spent, forged and unknown links alike'.")
def _(ref: Reference) -> None:
    _refuse_resubmit(ref, ref.payout_links.not_found)  # the one 404 of every unusable token


@variant("spent-link-unusable",
         doc="A second submit of a spent link answers 400 PAYOUT_LINK_UNUSABLE: '`PAYOUT_LINK_UNUSABLE` | 400 | ... "
             "Expired, spent, or failed at execution; links are single use'.")
def _(ref: Reference) -> None:
    _refuse_resubmit(ref, lambda: ApiError("PAYOUT_LINK_UNUSABLE", "This payout link was already used."))


@variant("expired-link-unusable",
         doc="A submit of an expired payout link answers 400 PAYOUT_LINK_UNUSABLE, as the Errors table has it "
             "('`PAYOUT_LINK_UNUSABLE` | 400 | ... Expired, spent, or failed at execution; links are single use'), "
             "not the submit route's '404 `NOT_FOUND` (expired, spent, forged or unknown token)'.")
def _(ref: Reference) -> None:
    refuse_expired(ref, lambda: ApiError("PAYOUT_LINK_UNUSABLE", "This payout link has expired; links are single use."))
