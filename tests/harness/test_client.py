import pytest

from payconform.results import records as results
from payconform.client import AUTO, Api, SafetyError, TargetError
from payconform.contract import Contract
from payconform.target import Target

KEY = "svc_test_" + "a" * 32 + "_" + "B" * 43
LIVE = "svc_live_" + "c" * 32 + "_" + "D" * 43

PROFILE = {"operations": {
    "createCheckoutProduct": {"method": "POST", "path": "/checkout/organizations/{orgId}/products",
                              "idempotency": "required", "money_write": False, "source": "spec"},
    "getCheckoutProduct": {"method": "GET", "path": "/checkout/organizations/{orgId}/products/{productId}",
                           "idempotency": "none", "source": "profile"},
    "fundSandbox": {"method": "POST", "path": "/payments/organizations/{orgId}/sandbox/funding",
                    "idempotency": "required", "money_write": True, "source": "profile"},
    "updateRecipient": {"method": "PATCH", "path": "/recipients/{orgId}/{recipientId}",
                        "idempotency": "optional", "source": "spec"},
    "echoNone": {"method": "POST", "path": "/echo/none", "idempotency": "none", "source": "spec"},
    "linkPage": {"method": "GET", "path": "/echo/link/{token}", "idempotency": "none", "auth": "none",
                 "source": "profile"},
    "sendMoney": {"method": "POST", "path": "/echo/send", "idempotency": "required", "moves_money": True,
                  "source": "spec"},
    "simulateOnLink": {"method": "POST", "path": "/checkout/organizations/{orgId}/links/{linkId}/payments/simulate",
                       "idempotency": "required", "money_write": False, "sandbox_only": True, "source": "spec"},
    "fundSandboxOnly": {"method": "POST", "path": "/payments/organizations/{orgId}/sandbox/funding",
                        "idempotency": "required", "money_write": True, "sandbox_only": True, "source": "profile"},
}}


@pytest.fixture
def record():
    rec = results.TestRecord(nodeid="t", requirements=["REQ-A"],
                             requirement_info=[{"id": "REQ-A", "part_title": "Endpoints", "section": "Common rules",
                                                "quote": "Every response carries the x-request-id header."}])
    token = results.use_record(rec)
    yield rec
    results.reset_record(token)


@pytest.fixture
def make_api(misbehaving):
    made = []

    def make(credential=KEY, timeout=2.0, **kw):
        target = Target.from_dict({"base_url": misbehaving + "/business/api/v1", "org_id": "ckorg1",
                                   "request_timeout": timeout})
        api = Api(target, credential, contract=Contract(profile=PROFILE), **kw)
        made.append(api)
        return api
    yield make
    for a in made:
        a.close()


def test_echo_fills_org_and_sends_key(make_api, record):
    ex = make_api().get("/echo/{orgId}/x", params={"a": "1"})
    assert ex.status == 200
    body = ex.json
    assert body["path"] == "/business/api/v1/echo/ckorg1/x?a=1"
    assert body["headers"]["x-api-key"] == KEY
    assert "idempotency-key" not in {k.lower() for k in body["headers"]}
    assert ex.request_id and ex.request.method == "GET"
    assert record.request_ids == [ex.request_id]
    entry = record.transcript[0]
    assert entry["request_headers"]["x-api-key"] == "svc_test_****"
    assert KEY not in str(record.transcript)


def test_idempotency_auto_explicit_paths(make_api):
    api = make_api()
    h = api.post("/echo/a", json={"x": 1}).json["headers"]
    assert h["idempotency-key"].startswith("pc-") and len(h["idempotency-key"]) == 35
    h = api.post("/echo/a", json={"x": 1}, idempotency_key=None).json["headers"]
    assert "idempotency-key" not in h
    h = api.post("/echo/a", json={"x": 1}, idempotency_key="k-1").json["headers"]
    assert h["idempotency-key"] == "k-1"
    h = api.delete("/echo/a").json["headers"]
    assert "idempotency-key" in h
    h = api.post("/echo/a", headers={"Idempotency-Key": "mine"}).json["headers"]
    assert h["idempotency-key"] == "mine"


def test_credential_none_and_other(make_api):
    api = make_api()
    assert "x-api-key" not in api.get("/echo/a", credential=None).json["headers"]
    assert make_api(None).get("/echo/a").json["headers"].get("x-api-key") is None
    assert api.get("/echo/a", credential="svc_test_other").json["headers"]["x-api-key"] == "svc_test_other"


def test_op_resolves_profile(make_api, record):
    api = make_api()
    ex = api.op("getCheckoutProduct", productId="p/1")
    assert ex.json["path"] == "/business/api/v1/checkout/organizations/ckorg1/products/p%2F1"
    assert ex.op_id == "getCheckoutProduct"
    assert record.profile_ops == ["getCheckoutProduct"]
    ex = api.op("createCheckoutProduct", json={"name": "n"})
    assert ex.json["method"] == "POST" and ex.json["headers"]["idempotency-key"].startswith("pc-")
    assert record.profile_ops == ["getCheckoutProduct"]  # source: spec is not recorded
    assert "idempotency-key" in api.op("updateRecipient", recipientId="r1", json={}).json["headers"]
    assert "idempotency-key" not in api.op("echoNone", json={}).json["headers"]
    with pytest.raises(TypeError, match="productId"):
        api.op("getCheckoutProduct")
    with pytest.raises(TypeError, match="bogus"):
        api.op("getCheckoutProduct", productId="p", bogus=1)
    with pytest.raises(KeyError, match="noSuchOp"):
        api.op("noSuchOp")


def test_live_key_refused_on_money_and_checkout_writes(make_api):
    api = make_api(LIVE)
    with pytest.raises(SafetyError):
        api.op("fundSandbox", json={"amount": "1.00", "currency": "USD"})
    with pytest.raises(SafetyError):
        api.op("createCheckoutProduct", json={})
    for path in ("/payments/organizations/{orgId}/payouts", "/payments/organizations/{orgId}/payouts/batches",
                 "/payments/organizations/{orgId}/payouts/p1/funding/confirm", "/checkout/organizations/{orgId}/links/l/refund"):
        with pytest.raises(SafetyError):
            api.post(path, json={})
    with pytest.raises(SafetyError):
        make_api().post("/checkout/organizations/{orgId}/products", json={}, credential=LIVE)
    # reads and other writes go through
    assert api.get("/echo/payouts").status == 200
    assert api.get("/checkout/organizations/{orgId}/products").status == 200


def test_live_refusal_exception_is_narrow(make_api):
    """`allow_live_refusal` lets a live key through only for a sandbox-only operation that moves no money."""
    api = make_api(LIVE)
    with pytest.raises(SafetyError):
        api.op("simulateOnLink", linkId="l1", json={})
    sent = api.op("simulateOnLink", linkId="l1", json={}, allow_live_refusal=True)
    assert sent.status == 200 and sent.json["headers"]["x-api-key"] == LIVE
    for op_id, kw in (("createCheckoutProduct", {}), ("fundSandboxOnly", {}), ("sendMoney", {})):
        with pytest.raises(SafetyError):
            api.op(op_id, json={}, allow_live_refusal=True, **kw)
    with pytest.raises(TypeError):
        api.post("/checkout/organizations/{orgId}/links/l1/payments/simulate", json={}, allow_live_refusal=True)


def test_auth_none_and_moves_money(make_api):
    api = make_api()
    assert "x-api-key" not in api.op("linkPage", token="t1").json["headers"]
    assert api.op("linkPage", token="t1", credential=KEY).json["headers"]["x-api-key"] == KEY
    with pytest.raises(SafetyError):
        make_api(LIVE).op("sendMoney", json={})


def test_non_ascii_header_values_are_sent(make_api):
    assert make_api().post("/echo/a", idempotency_key="clé-1").status == 200


def test_foreign_host_refused(make_api):
    with pytest.raises(SafetyError, match="refusing"):
        make_api().get("http://example.invalid/business/api/v1/x")


def test_redirect_not_followed(make_api):
    assert make_api().get("/redirect").status == 302


def test_hang_is_a_target_error_within_timeout(make_api, record):
    api = make_api(timeout=0.5)
    with pytest.raises(TargetError) as exc:
        api.get("/hang")
    msg = str(exc.value)  # the deadline that ended the request, not a measured time
    assert "no answer within 0.5s" in msg and "GET " in msg and "/business/api/v1/hang" in msg
    assert "[REQ-A]" in msg
    assert record.transcript[-1]["error"].startswith("no answer")


def test_dropped_connection(make_api):
    with pytest.raises(TargetError, match="dropped the connection"):
        make_api().get("/drop")


def test_garbage_answer(make_api):
    with pytest.raises(TargetError, match="not HTTP"):
        make_api().get("/garbage")


def test_not_json_body(make_api, record):
    ex = make_api().get("/notjson")
    assert ex.status == 200
    with pytest.raises(TargetError) as exc:
        _ = ex.json
    msg = str(exc.value)
    assert "expected: a JSON body" in msg and "[REQ-A]" in msg and f"x-request-id: {ex.request_id}" in msg


@pytest.mark.parametrize("route", ["/big", "/bigchunked"])
def test_body_over_one_mib(make_api, route):
    with pytest.raises(TargetError, match="1048576"):
        make_api().get(route)


def test_429_retried_after_retry_after(make_api, record):
    slept = []
    api = make_api(sleep=slept.append)
    ex = api.get("/ratelimited-once/a")
    assert ex.status == 200 and ex.attempts == 2
    assert slept == [1.0]
    assert [e["status"] for e in record.transcript] == [429, 200]


def test_429_bounded_and_raw(make_api):
    slept = []
    api = make_api(sleep=slept.append)
    ex = api.get("/ratelimited-always")
    assert ex.status == 429 and ex.attempts == 3 and len(slept) == 2
    slept.clear()
    ex = api.get("/ratelimited-once/b", raw=True)
    assert ex.status == 429 and slept == []


def test_transcript_truncates_bodies(make_api, record):
    make_api().post("/echo/big", content=b"z" * 10000)
    entry = record.transcript[-1]
    assert len(entry["request_body"]) < 4200 and "10000 bytes" in entry["request_body"]


def test_auto_repr():
    assert repr(AUTO) == "AUTO"
