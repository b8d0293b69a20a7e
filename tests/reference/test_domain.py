"""Recipients, products, links, payouts and the balance reads, through the API."""

from __future__ import annotations

import copy

from .helpers import PRODUCT, RECIPIENT, assert_error, new_org, operator, unique

R = "/recipients/{orgId}"
PRODUCTS = "/checkout/organizations/{orgId}/products"
LINKS = "/checkout/organizations/{orgId}/links"
PAY = "/payments/organizations/{orgId}"
EUR = {"kind": "fiat", "currency": "EUR", "recipientDetails": {"iban": "DE89 3704 0044 0532 0130 00"}}


def test_recipient_lifecycle(org):
    created = org.call("POST", R, json={**RECIPIENT, "externalId": "ext-1"})
    assert created.status_code == 201
    rec = created.json()
    assert rec["paymentMethods"][0]["status"] == "active" and rec["deletedAt"] is None
    assert org.call("GET", f"{R}/external/ext-1").json()["id"] == rec["id"]
    assert org.call("POST", R, json={**RECIPIENT, "externalId": "ext-1"}).json()["id"] == rec["id"]
    other_account = copy.deepcopy(RECIPIENT)
    other_account["paymentMethod"]["recipientDetails"]["accountNumber"] = "99999999"
    assert_error(org.call("POST", R, json={**other_account, "externalId": "ext-1"}), 409,
                 "BENEFICIARY_EXTERNAL_ID_CONFLICT")
    linked = assert_error(org.call("POST", R, json=RECIPIENT), 409, "BANK_ACCOUNT_ALREADY_LINKED")
    assert linked["existingRecipientId"] == rec["id"]
    assert linked["existingMethodId"] == rec["paymentMethods"][0]["id"]

    patched = org.call("PATCH", f"{R}/{rec['id']}", json={"name": "", "phone": "", "country": "GB"}).json()
    assert (patched["name"], patched["phone"], patched["country"]) == ("Ada Lovelace", None, "GB")
    refused = assert_error(org.call("PATCH", f"{R}/{rec['id']}", json={"paymentMethods": [], "recipientDetails": {}}),
                           400, "VALIDATION_ERROR")
    assert {e["field"] for e in refused["errors"]} == {"paymentMethods", "recipientDetails"}

    missing = assert_error(org.call("POST", f"{R}/{rec['id']}/methods", idem=unique("m"),
                                    json={"kind": "fiat", "currency": "USD",
                                          "recipientDetails": {"accountNumber": "1234"}}), 400, "VALIDATION_ERROR")
    assert missing["errors"] == [{"field": "recipientDetails.routingNumber", "reason": "required"}]
    added = org.call("POST", f"{R}/{rec['id']}/methods", idem=unique("m"), json=EUR)
    assert added.status_code == 201 and added.json()["method"]["currency"] == "EUR"
    assert len(added.json()["paymentMethods"]) == 2

    first_method = rec["paymentMethods"][0]["id"]
    after = org.call("DELETE", f"{R}/{rec['id']}/methods/{first_method}").json()
    assert [m["currency"] for m in after["paymentMethods"]] == ["EUR"]
    assert_error(org.call("DELETE", f"{R}/{rec['id']}/methods/{first_method}"), 404, "NOT_FOUND")

    deleted = org.call("DELETE", f"{R}/{rec['id']}")
    assert deleted.status_code == 200 and deleted.json()["deletedAt"]
    assert_error(org.call("GET", f"{R}/{rec['id']}"), 404, "NOT_FOUND")
    assert_error(org.call("POST", f"{R}/{rec['id']}/methods", idem=unique("m"), json=EUR), 404, "NOT_FOUND")
    rows = org.call("GET", f"{PAY}/audit-events").json()["data"]
    assert [(r["action"], r["outcome"]) for r in rows[:2]] == [("recipient.method_add", "refused"),
                                                               ("recipient.delete", "succeeded")]
    assert rows[0]["errorType"] == "NOT_FOUND" and rows[0]["resourceId"] == rec["id"]


def test_recipient_list_pages(org):
    for i in range(5):
        body = copy.deepcopy(RECIPIENT)
        body["paymentMethod"]["recipientDetails"]["accountNumber"] = f"1000{i}"
        org.call("POST", R, json=body)
    first = org.call("GET", R + "?limit=3").json()
    second = org.call("GET", R + "?limit=3&cursor=" + first["nextCursor"]).json()
    assert len(first["data"]) == 3 and len(second["data"]) == 2 and "nextCursor" not in second
    assert_error(org.call("GET", R + "?cursor=forged"), 400, "VALIDATION_ERROR")
    assert_error(org.call("GET", R + "?limit=0"), 400, "VALIDATION_ERROR")


def test_products_and_links(org):
    product = org.call("POST", PRODUCTS, json=PRODUCT, idem=unique("p")).json()
    assert_error(org.call("POST", PRODUCTS, json=PRODUCT, idem=unique("p")), 409, "CONFLICT")
    assert_error(org.call("POST", PRODUCTS, json={**PRODUCT, "name": "N", "unitAmount": "-1"}, idem=unique("p")),
                 400, "BAD_REQUEST")
    assert_error(org.call("POST", PRODUCTS, json={**PRODUCT, "name": "N", "unitAmount": 5}, idem=unique("p")),
                 400, "VALIDATION_ERROR")
    link = org.call("POST", LINKS, json={"productId": product["id"]}, idem=unique("l"))
    assert link.status_code == 201 and link.json()["status"] == "draft"
    assert link.json()["items"][0]["unitAmount"] == "25.00"
    assert_error(org.call("POST", LINKS, json={"productId": product["id"], "items": []}, idem=unique("l")),
                 400, "BAD_REQUEST")
    pid = product["id"]
    repriced = org.call("PATCH", f"{PRODUCTS}/{pid}", json={"unitAmount": "30.00", "description": "new"},
                        idem=unique("p")).json()
    assert repriced["linkCount"] == 1
    read = org.call("GET", f"{LINKS}/{link.json()['id']}").json()
    assert read["items"][0]["unitAmount"] == "25.00" and read["items"][0]["description"] == "new"
    assert_error(org.call("DELETE", f"{PRODUCTS}/{pid}", idem=unique("p")), 409, "CONFLICT")
    org.call("PATCH", f"{PRODUCTS}/{pid}", json={"archived": True}, idem=unique("p"))
    assert org.call("GET", PRODUCTS).json()["data"] == []
    assert_error(org.call("POST", LINKS, json={"productId": pid}, idem=unique("l")), 400, "BAD_REQUEST")
    org.call("POST", PRODUCTS, json=PRODUCT, idem=unique("p"))
    assert_error(org.call("PATCH", f"{PRODUCTS}/{pid}", json={"archived": False}, idem=unique("p")), 409, "CONFLICT")
    assert org.call("DELETE", f"{LINKS}/{link.json()['id']}", idem=unique("l")).status_code == 200
    assert org.call("DELETE", f"{PRODUCTS}/{pid}", idem=unique("p")).status_code == 200
    assert_error(org.call("GET", f"{PRODUCTS}/{pid}"), 404, "NOT_FOUND")


def test_payouts_and_balance_reads(org):
    assert_error(org.call("POST", f"{PAY}/payouts", idem=unique("po"),
                          json={"destinationAccountId": "acct_x", "sourceAmount": "1.00", "sourceCurrency": "USD",
                                "destinationCurrency": "USD", "reference": "r"}), 404, "DESTINATION_ACCOUNT_NOT_FOUND")
    account = org.call("POST", R, json=RECIPIENT).json()["paymentMethods"][0]["destinationAccountId"]
    body = {"destinationAccountId": account, "sourceAmount": "40.00", "sourceCurrency": "USD",
            "destinationCurrency": "USD", "reference": "inv-1"}
    assert_error(org.call("POST", f"{PAY}/payouts", json=body, idem=unique("po")), 400, "INSUFFICIENT_BALANCE")
    assert_error(org.call("POST", f"{PAY}/payouts", json={**body, "sourceAmount": "0"}, idem=unique("po")), 400,
                 "BAD_REQUEST")
    funded = org.call("POST", f"{PAY}/sandbox/funding", json={"amount": "100.00", "currency": "USD"}, idem=unique("f"))
    assert funded.json() == {"balance": {"currency": "USD", "amount": "100.00"}}
    payout = org.call("POST", f"{PAY}/payouts", json=body, idem=unique("po"))
    assert payout.status_code == 201
    p = payout.json()
    assert (p["status"], p["requiresFunding"], p["completedAt"], p["fee"]) == (
        "pending", False, None, {"currency": "USD", "amount": "0.00"})
    assert org.call("GET", f"{PAY}/orders/{p['payoutId']}").json() == p
    assert org.call("GET", f"{PAY}/payouts/{p['payoutId']}").json() == p
    assert org.call("GET", f"{PAY}/orders?reference=inv-1").json()["data"] == [p]
    assert org.call("GET", f"{PAY}/balance").json()["balances"] == [{"currency": "USD", "amount": "60.00"}]

    txs = org.call("GET", f"{PAY}/balance_transactions").json()["data"]
    assert [(t["type"], t["amount"], t["balanceAfter"]) for t in txs] == [
        ("payout", "-40.00", "60.00"), ("funding", "100.00", "100.00")]
    assert org.call("GET", f"{PAY}/balance_transactions?type=funding").json()["data"][0]["type"] == "funding"
    for query in ("limit=101", "type=bogus", "createdAfter=2024-01-01T00:00:00", "limit=5&limit=6",
                  "cursor=999999"):
        assert_error(org.call("GET", f"{PAY}/balance_transactions?{query}"), 400, "VALIDATION_ERROR")
    history = org.call("GET", f"{PAY}/balance/history?limit=9999").json()
    assert [(e["type"], e["status"]) for e in history["entries"]] == [("funding", "COMPLETED"), ("payout", "DEBITED")]
    assert history["hasMore"] is False and "nextCursor" not in history
    page = org.call("GET", f"{PAY}/balance/history?limit=1").json()
    assert_error(org.call("GET", f"{PAY}/balance/history?cursor={page['nextCursor']}&since=2024-01-01T00:00:00Z"),
                 400, "VALIDATION_ERROR")
    since = assert_error(org.call("GET", f"{PAY}/balance/history?since=yesterday"), 400, "VALIDATION_ERROR")
    assert since["errors"][0]["field"] == "since"
    assert_error(org.call("GET", f"{PAY}/audit-events?createdBefore=nope"), 400, "VALIDATION_ERROR")
    audit = org.call("GET", f"{PAY}/audit-events?action=payout.create").json()["data"]
    assert [a["outcome"] for a in audit] == ["succeeded", "refused", "refused", "refused"]
    assert audit[0]["resourceId"] == p["payoutId"] and audit[0]["apiKeyPrefix"] == org.key[:41]


def test_balances_sum_token_figures_exactly(client):
    """`balances` is the sum of sources: six-place wallet figures are summed, not rounded to cents."""
    org = new_org(client)
    for chain, amount in (("ethereum", "12.345678"), ("polygon", "7.5")):
        r = operator(client, "PUT", f"/orgs/{org.id}/wallet", {"chain": chain, "currency": "USDC", "amount": amount})
        assert r.status_code == 200, r.text
    live = org.issue(mode="live", scopes=["read"])  # the sandbox's wallet is empty: the own wallet is live
    balances = {b["currency"]: b["amount"] for b in org.call("GET", f"{PAY}/balance", key=live).json()["balances"]}
    assert balances["USDC"] == "19.845678"

