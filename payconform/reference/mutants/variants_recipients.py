"""Tolerated variants of recipient creation, whose path, bodies and answers the spec does not show beyond
"`createBeneficiary`: answers include 401, 403, 422, 503", and of deleting a recipient twice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ApiError
from ..operation import Reply
from ..recipients import recipient_json
from . import variant
from .recipients import Handler, around, body

if TYPE_CHECKING:
    from ..operation import Call
    from ..reference import Reference


@variant("recipient-provider-unavailable-non-ascii",
         doc="The payout-account provider cannot register a recipient whose `name` has a character outside ASCII: "
             "503 PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE, nothing saved. createBeneficiary 'answers include ... 503' "
             "and the error table gives the type 503 ('The account could not be registered; nothing was saved').")
def _(ref: Reference) -> None:
    @around(ref, "createBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        name = body(call).get("name")
        if isinstance(name, str) and not name.isascii():
            raise ApiError("PAYOUT_ACCOUNT_PROVIDER_UNAVAILABLE", "the provider cannot register this name")
        return original(call)


@variant("recipient-delete-repeatable",
         doc="Deleting a recipient that is already deleted answers 200 again with the recipient and its first "
             "`deletedAt`: 'Delete a recipient (`deleteBeneficiary`; 200, 404)' does not say which a deleted one "
             "gets, and a recipient carries `deletedAt` (a delete may be soft).")
def _(ref: Reference) -> None:
    @around(ref, "deleteBeneficiary")
    def _(original: Handler, call: Call) -> Reply:
        try:
            return original(call)
        except ApiError as err:
            deleted = ref.store.one(
                "SELECT * FROM recipients WHERE id = ? AND org_id = ? AND mode = ? AND deleted_at IS NOT NULL",
                (call.params["recipientId"], call.org_id, call.mode))
            if err.type != "NOT_FOUND" or deleted is None:
                raise
            return Reply(200, recipient_json(call, deleted), deleted["id"])
