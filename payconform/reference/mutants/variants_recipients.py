"""Tolerated variants of recipient creation, whose path, bodies and answers the spec does not show beyond
"`createBeneficiary`: answers include 401, 403, 422, 503"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ApiError
from . import variant
from .recipients import Handler, around, body

if TYPE_CHECKING:
    from ..operation import Call, Reply
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
