"""Endpoints > Checkout, the link rows (publish, pause, delete; create, list, read and update from the
profile since their paths are not shown) and Resources > Checkout link.

The operator breaks the card processor with faults of the pseudo-operation `checkoutCardProcessor` (`timeout`:
it does not answer; `unavailable`: card payments are not set up) and the target answers as the spec says (500
and 503 INTERNAL); a publish still in flight is held by an operator delay, in fresh organizations so that
nobody else meets them.
"""

from __future__ import annotations

import concurrent.futures
import time

import pytest

from payconform.suite import Api, Contract, expect, expect_error, expect_status

from .._support.answers import null_or_absent
from .._support.checkout import create_link, draft, new_link, pause, priced_product, publish, read_link, sent_link
from .._support.overlap import on_wire, overlapped
from .._support.products import create_product
from .._support.profile import success

CARD_PROCESSOR = "checkoutCardProcessor"


@pytest.mark.req("LINK-PUBLISH", "LINK-FIELDS", "LINK-STATUS-VALUES")
def test_publish_a_draft(api: Api, contract: Contract, unique) -> None:
    """A new link is a `draft` with a null `expiresAt` (null or left out: "nullable"); made from a product
    (the profile's body sends `productId`), its `productId` names that product, else it lists `items`; publish
    answers 200 with `status: sent` and a `shareUrl`, and a read agrees."""
    product_id = priced_product(api, contract, unique, "150.00")
    link = create_link(api, contract, product_id)
    expect(link.get("status") == "draft" and null_or_absent(link, "expiresAt"),
           f"a new link reads status {link.get('status')!r}, expiresAt {link.get('expiresAt', 'absent')!r} "
           "(accepted for expiresAt: null or absent)")
    if "productId" in (contract.operation("createCheckoutLink").get("body") or {"productId": None}):
        expect(link.get("productId") == product_id,
               f"a link made from product {product_id!r} has productId {link.get('productId', 'absent')!r}; the "
               "link's fields are \"`shareUrl`, `expiresAt` (nullable), `productId`, `items`\"")
    else:
        expect(isinstance(link.get("items"), list) and bool(link["items"]),
               f"a link made from `items` has items {link.get('items', 'absent')!r}")
    ex = publish(api, link["id"])
    expect_status(ex, 200, "publishing a draft")
    expect(ex.json.get("status") == "sent" and isinstance(ex.json.get("shareUrl"), str) and ex.json["shareUrl"],
           f"publish answered status {ex.json.get('status')!r}, shareUrl {ex.json.get('shareUrl')!r}", ex)
    read = read_link(api, link["id"])
    expect(read.get("status") == "sent" and read.get("shareUrl") == ex.json["shareUrl"],
           f"a read after publish shows {read.get('status')!r}, {read.get('shareUrl')!r}", ex)


@pytest.mark.req("LINK-PRODUCT-XOR-ITEMS", "ERR-BAD-REQUEST")
def test_product_and_items_together(api: Api, contract: Contract, unique) -> None:
    """Both `productId` and `items`: 400 BAD_REQUEST."""
    product = create_product(api, contract, unique)
    ex = new_link(api, contract, unique, items=[{"productId": product["id"], "quantity": 1}])
    expect_error(ex, 400, "BAD_REQUEST", "a link with both productId and items")


@pytest.mark.req("ERR-BAD-REQUEST")
def test_editing_a_published_link(api: Api, contract: Contract, unique) -> None:
    """PATCH of a sent link: 400 BAD_REQUEST, link unchanged; the same PATCH of a draft works."""
    link = sent_link(api, contract, unique)
    ex = api.op("updateCheckoutLink", linkId=link["id"], json={"expiresAt": None})
    expect_error(ex, 400, "BAD_REQUEST", "editing a published link")
    expect(read_link(api, link["id"]).get("status") == "sent", "the refused edit changed the link", ex)
    other = draft(api, contract, unique)
    expect_status(api.op("updateCheckoutLink", linkId=other["id"], json={"expiresAt": None}), 200, "editing a draft")


@pytest.mark.req("LINK-PUBLISH-ON-CREATE")
def test_publish_on_create(api: Api, contract: Contract, unique) -> None:
    """`publish: true` on create: 201 with the link published (`sent`) and no `publishError` (absent or null)."""
    ex = new_link(api, contract, unique, publish=True)
    expect_status(ex, success(contract, "createCheckoutLink"), "creating a link with publish: true")
    expect(ex.json.get("status") == "sent" and null_or_absent(ex.json, "publishError"),
           f"create with publish: true answered status {ex.json.get('status')!r},"
           f" publishError {ex.json.get('publishError')!r}", ex)


@pytest.mark.needs("operator")
@pytest.mark.req("LINK-PUBLISH-ON-CREATE")
def test_failed_publish_on_create_is_201(fresh_org, operator, contract: Contract, unique) -> None:
    """The card processor refuses during create with `publish: true`: still 201, with `publishError.type`."""
    org = fresh_org()
    operator.inject_fault(org.org_id, CARD_PROCESSOR, "error", status=503, type="INTERNAL")
    ex = new_link(org.api, contract, unique, publish=True)
    expect_status(ex, success(contract, "createCheckoutLink"), "a create whose publish failed")
    error = ex.json.get("publishError")
    expect(isinstance(error, dict) and isinstance(error.get("type"), str),
           f"the 201 carries publishError {error!r}, not an object with `type`", ex)


@pytest.mark.smoke
@pytest.mark.needs("operator")
@pytest.mark.req("LINK-PUBLISH-NOT-SET-UP", "ERR-INTERNAL")
def test_card_payments_not_set_up(fresh_org, operator, contract: Contract, unique) -> None:
    """Card payments are not set up (the processor is unavailable): 503 INTERNAL with a reason in `detail`, link unchanged: still a draft, its
    `shareUrl` what the create answered (none, or the URL a draft may carry from creation)."""
    org = fresh_org()
    link = draft(org.api, contract, unique)
    operator.inject_fault(org.org_id, CARD_PROCESSOR, "unavailable")
    body = expect_error(publish(org.api, link["id"]), 503, "INTERNAL", "publish when card payments are not set up")
    expect(body["detail"].strip(), "the 503 detail gives no reason")
    after = read_link(org.api, link["id"])
    was, now = link.get("shareUrl") or None, after.get("shareUrl") or None
    expect(after.get("status") == "draft" and now == was,
           f"after the 503 the link reads {after.get('status')!r}, shareUrl {now!r}; 'link unchanged' is still "
           f"`draft` with the shareUrl the draft was created with, {was!r} (accepted: none, or a URL a draft "
           "carries from creation)")


@pytest.mark.needs("operator", "clock")
@pytest.mark.req("LINK-PUBLISH-PROCESSOR-TIMEOUT", "ERR-INTERNAL")
def test_processor_timeout_then_conflict(fresh_org, operator, clock, contract: Contract, unique) -> None:
    """The processor does not answer: 500 INTERNAL; an immediate retry answers 409 CONFLICT; once the
    attempt has cleared the publish goes through. When an attempt clears is not shown: the organization's clock
    moves by the profile's `sandbox.card_publish_attempt.clears_within_seconds`."""
    org = fresh_org()
    link = draft(org.api, contract, unique)
    operator.inject_fault(org.org_id, CARD_PROCESSOR, "timeout")
    expect_error(publish(org.api, link["id"]), 500, "INTERNAL", "publish when the processor does not answer")
    expect_error(publish(org.api, link["id"]), 409, "CONFLICT", "an immediate retry")
    clears = int(contract.profile["sandbox"]["card_publish_attempt"]["clears_within_seconds"])
    clock.advance(org.org_id, clears)
    expect_status(publish(org.api, link["id"]), 200, f"publishing {clears} s after the unanswered attempt, when the "
                  "profile's `sandbox.card_publish_attempt.clears_within_seconds` says it has cleared")


@pytest.mark.needs("operator", "clock")
@pytest.mark.req("LINK-PUBLISH-CONFLICT", "ERR-CONFLICT")
def test_repriced_draft_conflicts(fresh_org, operator, clock, contract: Contract, unique) -> None:
    """A draft whose card page may have been set up (a publish the processor did not answer: "the card page
    may exist") and then repriced: once the attempt has cleared, publishing answers 409 CONFLICT (a page was
    set up) or publishes the draft at its new product (no page was made), never anything else."""
    org = fresh_org()
    link = draft(org.api, contract, unique)
    operator.inject_fault(org.org_id, CARD_PROCESSOR, "timeout")
    expect_error(publish(org.api, link["id"]), 500, "INTERNAL", "publish when the processor does not answer")
    cheaper = create_product(org.api, contract, unique, unitAmount="99.00")
    expect_status(org.api.op("updateCheckoutLink", linkId=link["id"], json={"productId": cheaper["id"]}), 200,
                  "repricing the draft")
    clock.advance(org.org_id, 3600)
    ex = publish(org.api, link["id"])
    if ex.status == 200:
        after = read_link(org.api, link["id"])
        expect(after.get("status") == "sent" and after.get("productId") == cheaper["id"],
               f"the repriced draft published with 200 reads status {after.get('status')!r}, product "
               f"{after.get('productId')!r}; published, it is `sent` at its new product {cheaper['id']!r}", ex)
        return
    expect_error(ex, 409, "CONFLICT", "publishing a draft repriced after its card page (or 200: no page was made)")


WHILE_PUBLISHING = {
    "publish": lambda api, link_id: publish(api, link_id),
    "edit": lambda api, link_id: api.op("updateCheckoutLink", linkId=link_id, json={"expiresAt": None}),
}


@pytest.mark.smoke(ids=["publish"])
@pytest.mark.needs("operator")
@pytest.mark.req("LINK-PUBLISH-CONFLICT", "ERR-CONFLICT")
@pytest.mark.parametrize("second_call", sorted(WHILE_PUBLISHING))
def test_publish_in_flight_conflicts(second_call: str, fresh_org, operator, contract: Contract, unique) -> None:
    """While one publish of a link is still running (held by an operator delay), another publish or a PATCH
    of the link answers 409 CONFLICT; the first publish completes. Judged only when the second call reached the
    target while the first was held (a busy key's pacing may hold it back)."""
    org = fresh_org()
    link = draft(org.api, contract, unique)
    operator.inject_fault(org.org_id, "publishCheckoutLink", "delay", seconds=2)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        held = pool.submit(on_wire, lambda: publish(org.api.with_credential(org.api.credential), link["id"]))
        time.sleep(0.5)  # the first publish is now held by the operator's delay
        second = on_wire(lambda: WHILE_PUBLISHING[second_call](org.api, link["id"]))
        first = held.result(timeout=15)
    if not (first.start < second.start and overlapped(first, second)):
        pytest.skip(f"the {second_call} did not reach the target while the publish was held (the key's pacing held "
                    "one of them back): a conflict with a publish in flight could not be put to the test")
    expect_status(first.ex, 200, "the held publish")
    expect_error(second.ex, 409, "CONFLICT", f"a {second_call} of the link while a publish is in flight")


@pytest.mark.req("LINK-PAUSE", "LINK-STATUS-VALUES")
def test_pause_a_draft(api: Api, contract: Contract, unique) -> None:
    """POST pause of a draft: 200 with the link `cancelled`."""
    link = draft(api, contract, unique)
    ex = pause(api, link["id"])
    expect_status(ex, 200, "pausing a draft")
    expect(ex.json.get("status") == "cancelled", f"pause answered status {ex.json.get('status')!r}, not `cancelled` "
           "(\"`status` (`draft`, `sent`, `cancelled`, `expired`)\")", ex)


@pytest.mark.req("LINK-DELETE", "ERR-BAD-REQUEST")
def test_delete_a_link_that_was_live(api: Api, contract: Contract, unique) -> None:
    """DELETE of a link that was live (sent, then paused): 400 BAD_REQUEST, and it can still be read."""
    link = sent_link(api, contract, unique)
    expect_status(pause(api, link["id"]), 200, "pausing the link")
    expect_error(api.op("deleteCheckoutLink", linkId=link["id"]), 400, "BAD_REQUEST", "deleting a link that was live")
    expect(read_link(api, link["id"]).get("status") == "cancelled", "the refused delete changed the link")
