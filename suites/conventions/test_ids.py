"""Conventions, `{orgId}` and other ids: opaque, passed unchanged - the organization id in every
organization-scoped path, and every other id exactly as the service returned it."""

from __future__ import annotations

import re

import pytest

from payconform.suite import Api, Contract, Exchange, expect, expect_error, expect_status

from .._support.answers import member
from .._support.products import post_product, product_body
from .._support.recipients import untouched_recipient
from .._support.types import Unique

# CUID (`c` + 24 base-36) or CUID2 (a letter, then lowercase base-36), at their usual lengths
CUID_SHAPED = re.compile(r"^[a-z][a-z0-9]{19,31}$")
# One read per organization-scoped prefix (payments, recipients, checkout) that needs nothing but the key.
ORG_SCOPED_READS = ["getBalance", "listBeneficiaries", "listCheckoutProducts"]
OTHER_ORG_ID = "cpayconformnosuchorg000000"  # an organization id no target issued (when other_org_id is not set)


def expect_same_id(read: Exchange, wanted: str, what: str) -> None:
    """The read answers the resource that was asked for."""
    expect(member(read, "id") == wanted, f"reading {what} {wanted!r} answered id {member(read, 'id')!r}", read)


@pytest.mark.breadth
@pytest.mark.req("CONV-ORGID-UNCHANGED")
@pytest.mark.parametrize("op_id", ORG_SCOPED_READS)
def test_org_id_as_issued_works_on_every_prefix(api: Api, op_id: str) -> None:
    """The organization id exactly as issued addresses the organization under each prefix (200), where another
    organization's id does not (not 2xx): a 200 to any id would say nothing about the id as issued."""
    expect_status(api.op(op_id), 200, f"{op_id} with the organization id as issued")
    other = api.other_org_id or OTHER_ORG_ID
    ex = api.op(op_id, orgId=other)
    expect(not 200 <= ex.status < 300, f"{op_id} under another organization's id {other!r} answered {ex.status}"
           " too, so the 200 does not show that the id as issued addressed the organization", ex)


@pytest.mark.req("CONV-IDS-OPAQUE")
def test_returned_ids_are_accepted_verbatim(api: Api, contract: Contract, unique: Unique) -> None:
    """Ids from create answers (recipient, its method, product) address the same resource when sent back as is:
    the recipient the tests of refused changes share (`untouched_recipient`), as created, and a new product."""
    created = untouched_recipient(api, contract, unique)
    methods = created.get("paymentMethods") or [None]
    expect(isinstance(methods[0], dict), f"the shared recipient lists no payment method: {methods!r}")
    recipient_id, method_id = created["id"], methods[0].get("id")
    read = expect_status(api.op("getBeneficiary", recipientId=recipient_id), 200, "read the recipient by its id")
    expect_same_id(read, recipient_id, "recipient")
    expect_status(api.op("getBeneficiaryMethodDetails", recipientId=recipient_id, methodId=method_id), 200,
                  "read the method's details by the returned ids")
    created = post_product(api, product_body(contract, unique))
    product_id = member(created, "id")
    read = expect_status(api.op("getCheckoutProduct", productId=product_id), 200, "read the product by its id")
    expect_same_id(read, product_id, "product")


@pytest.mark.req("CONV-ORGID-OPAQUE")
def test_org_id_is_cuid_shaped(api: Api) -> None:
    """"Opaque organization id, normally CUID-shaped": the suite never parses it, and only notes (a warning,
    `normally`) an id that does not look like a CUID."""
    expect(CUID_SHAPED.match(str(api.org_id)) is not None,
           f"the organization id {api.org_id!r} is not CUID-shaped (lowercase base-36, 20-32 characters)")


@pytest.mark.req("CONV-ORGID-NO-ALIAS")
def test_org_prefixed_alias_does_not_address_the_org(api: Api) -> None:
    """The id in use carries no `org_` prefix. "Not an `org_`-prefixed alias" describes the id to pass, not what
    a server does with an alias: `org_<id>` in the path may be refused (4xx) or resolved to the same organization
    (2xx, a balance with the control's members; a control with none is no balance, so a server answering `{}`
    to everything resolves nothing); a server error is neither."""
    expect(not str(api.org_id).startswith("org_"), f"the organization id {api.org_id!r} is an `org_` alias")
    control = expect_status(api.op("getBalance"), 200, "GET balance under the organization id as issued (the control)")
    ex = api.op("getBalance", orgId="org_" + str(api.org_id))
    resolved = 200 <= ex.status < 300 and isinstance(ex.json, dict) and isinstance(control.json, dict) \
        and bool(control.json) and set(ex.json) == set(control.json)
    expect(400 <= ex.status < 500 or resolved, f"GET balance under `org_{api.org_id}` answered {ex.status}: neither "
           "a refusal (4xx) nor the organization's balance (accepted readings: refused, or resolved as an alias)", ex)


@pytest.mark.req("CONV-ORG-SCOPED")
@pytest.mark.needs("operator")
def test_ids_resolve_only_under_their_org(api: Api, fresh_org, contract: Contract, unique: Unique) -> None:
    """A product made in another organization reads there (200), is 404 NOT_FOUND under this organization's
    `{orgId}`, and this key cannot address the other organization's path (403 FORBIDDEN)."""
    other = fresh_org()
    created = post_product(other.api, product_body(contract, unique))
    product_id = member(created, "id")
    expect_same_id(expect_status(other.api.op("getCheckoutProduct", productId=product_id), 200,
                                 "reading the product in its own organization"), product_id, "product")
    expect_error(api.op("getCheckoutProduct", productId=product_id), 404, "NOT_FOUND",
                 "reading another organization's product under this organization's id")
    expect_error(api.op("getCheckoutProduct", orgId=other.org_id, productId=product_id), 403, "FORBIDDEN",
                 "reading it under its own organization's id with this organization's key")
