"""Authentication > Mode A rule 5, "Wrong organization: `FORBIDDEN`", and Endpoints rule 1, "A 401 or 403
means nothing ran": a key used on another organization's path is refused, reads and writes alike, and a
refused write changes nothing anywhere."""

from __future__ import annotations

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status
from payconform.suite import Kind, Needs

from .._support.products import product_body
from .._support.recipients import reread, untouched_recipient


def _other_org(api: Api) -> str:
    if not api.other_org_id:
        Needs(Kind.TARGET, "other_org_id").skip()
    return str(api.other_org_id)


@pytest.mark.smoke
@pytest.mark.req("AUTH-WRONG-ORG-FORBIDDEN", "ERR-FORBIDDEN")
def test_read_of_other_org_is_forbidden(api: Api) -> None:
    """A read under another organization's id: 403 FORBIDDEN."""
    expect_error(api.op("getBalance", orgId=_other_org(api)), 403, "FORBIDDEN")


@pytest.mark.req("AUTH-WRONG-ORG-FORBIDDEN", "ERR-FORBIDDEN", "AUTH-REFUSED-NOTHING-RAN")
def test_write_through_other_org_is_forbidden(api: Api, contract: Contract, unique) -> None:
    """A PATCH of one of the key's own recipients (the one the tests of refused recipient changes share,
    `untouched_recipient`), addressed under another organization's id: 403 FORBIDDEN, and the recipient is
    unchanged (a server that finds the recipient by id alone would rename it)."""
    recipient = untouched_recipient(api, contract, unique)
    ex = api.op("updateBeneficiary", orgId=_other_org(api), recipientId=recipient["id"],
                json={"name": unique("renamed")})
    expect_error(ex, 403, "FORBIDDEN")
    name = reread(api, recipient).get("name")
    expect(name == recipient.get("name"), f"the refused PATCH ran: the recipient's name is now {name!r}", ex)


@pytest.mark.req("AUTH-REFUSED-NOTHING-RAN", "AUTH-WRONG-ORG-FORBIDDEN")
@pytest.mark.needs("operator")
def test_refused_write_to_other_org_ran_nothing(api: Api, fresh_org, contract: Contract, unique) -> None:
    """A product create under another organization's id is refused with 403 FORBIDDEN and creates nothing
    there: that organization's own key can then create a product of the same name (names are unique among
    active products, so a product made by the refused call would answer 409)."""
    other = fresh_org()
    body = product_body(contract, unique)
    expect_error(api.op("createCheckoutProduct", orgId=other.org_id, json=body), 403, "FORBIDDEN")
    again = other.api.op("createCheckoutProduct", json=body)
    expect_status(again, 201, f"the organization's own create of product {body['name']!r}: the name must be free")
