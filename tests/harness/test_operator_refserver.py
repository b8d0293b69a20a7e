import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import textwrap
from pathlib import Path

import httpx
import pytest

from payconform.operator import AdapterWrapper, Clock, HttpOperator, OperatorError, load_operator
from payconform.plugin.fixtures import SkippingOperator
from payconform.refserver import RefServer, RefServerError
from payconform.target import Target

HERE = Path(__file__).resolve().parent
BASE = "http://127.0.0.1:9/business/api/v1"


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), e.get("PYTHONPATH", "")) if p)
    return e


def test_refserver_urls_and_health(fake_ref):
    assert fake_ref.base_url.startswith("http://127.0.0.1:") and fake_ref.base_url.endswith("/business/api/v1")
    assert fake_ref.operator_url == fake_ref.base_url.replace("/business/api/v1", "/_operator")
    assert httpx.get(fake_ref.operator_url + "/health").json() == {"ok": True}
    assert fake_ref.running()


def test_refserver_start_failure_shows_output():
    with pytest.raises(RefServerError, match="(?s)exited with code 2.*unknown mutant explode"):
        RefServer(module="fake_reference", env=env(), mutant="explode").start()


def test_refserver_startup_timeout():
    server = RefServer(module="silent_server", env=env(), startup_timeout=1.5)
    with pytest.raises(RefServerError, match="(?s)did not announce itself within 1.5s.*never ready"):
        server.start()
    assert server.proc is None


def test_refserver_stop():
    with RefServer(module="fake_reference", env=env()) as ref:
        url = ref.operator_url
    with pytest.raises(httpx.HTTPError):
        httpx.get(url + "/health", timeout=1)


def test_provisioned_target(ref_target):
    target, path = ref_target
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    creds = target.credentials
    assert len(creds["api_key_pool"]) == 12 and len(set(creds["api_key_pool"])) == 12
    assert creds["api_key"] == creds["api_key_pool"][0]
    assert creds["live_key"].startswith("svc_live_")
    for name in ("read_only_key", "refunds_key", "crypto_key", "revoked_key", "expired_key", "pinned_key",
                 "rate_limit_key"):
        assert creds[name].startswith("svc_test_"), name
    assert target.other_org_id and target.other_org_id != target.org_id
    assert Target.load(path).to_dict() == target.to_dict()
    # the keys behave as named
    def status(key):
        return httpx.get(f"{target.base_url}/payments/organizations/{target.org_id}/balance",
                         headers={"x-api-key": key}).json().get("type", "ok")
    assert status(creds["api_key"]) == "ok"
    assert status(creds["revoked_key"]) == "UNAUTHORIZED"
    assert status(creds["expired_key"]) == "KEY_EXPIRED"
    assert status(creds["pinned_key"]) == "KEY_IP_NOT_ALLOWED"


def test_http_operator_errors(fake_ref):
    op = HttpOperator(fake_ref.operator_url, "wrong-token")
    with pytest.raises(OperatorError) as exc:
        op.create_org()
    assert exc.value.status == 401 and "wrong-token" not in str(exc.value)


def test_load_operator_variants(tmp_path, monkeypatch):
    assert load_operator(Target.from_dict({"base_url": BASE, "org_id": "ck1"})) is None
    ref = load_operator(Target.from_dict({"base_url": BASE, "org_id": "ck1", "operator": {
        "adapter": "reference", "url": "http://127.0.0.1:9/_operator", "token": "tok-abcdef"}}))
    assert isinstance(ref, HttpOperator) and "advance_clock" in ref.capabilities
    (tmp_path / "my_adapter.py").write_text(textwrap.dedent('''
        class Partial:
            def __init__(self, config):
                self.config = config
            def create_org(self, **kw):
                return "org-from-" + self.config["name"]
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    op = load_operator(Target.from_dict({"base_url": BASE, "org_id": "ck1", "operator": {
        "adapter": "my_adapter:Partial", "name": "custom"}}))
    assert isinstance(op, AdapterWrapper)
    assert op.capabilities == {"create_org"}
    assert op.create_org() == "org-from-custom"
    with pytest.raises(NotImplementedError, match="cannot advance_clock"):
        op.advance_clock("o", 1)
    skipping = SkippingOperator(op)
    with pytest.raises(pytest.skip.Exception, match="needs operator: cannot issue_key"):
        skipping.issue_key("o")
    with pytest.raises(OperatorError, match="cannot be loaded"):
        load_operator(Target.from_dict({"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "nope_mod:X"}}))


def test_clock_forms():
    calls = []

    class Op:
        def advance_clock(self, org_id, seconds):
            calls.append((org_id, seconds))

    clock = Clock(Op(), "ck-default")
    clock.advance("ck-other", 30)
    clock.advance(60)
    assert calls == [("ck-other", 30), ("ck-default", 60)]


def test_the_operator_token_is_not_on_the_command_line() -> None:
    """`ps` shows every user's command lines: the token travels in the server's environment instead."""
    with RefServer() as ref:
        cmdline = Path(f"/proc/{ref.proc.pid}/cmdline").read_bytes().decode(errors="replace")
        assert ref.operator_token not in cmdline
        assert httpx.get(ref.operator_url + "/health", timeout=5).status_code == 200
        assert HttpOperator(ref.operator_url, ref.operator_token).create_org() is not None


def test_operator_calls_never_reuse_a_connection_the_server_may_be_closing(monkeypatch):
    """An operator call after a pause opens a fresh connection once the idle one is older than the suite's
    keep-alive expiry (below the 5 s after which uvicorn, and so the reference, closes it): reusing it raced that
    close and failed a CI run with "Server disconnected without sending a response"."""
    from payconform.transport import http as transport_http

    monkeypatch.setattr(transport_http, "KEEPALIVE_EXPIRY", 0.3)
    connections: list[object] = []

    class KeepsAlive(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            connections.append(self.client_address)
            super().setup()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(201)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "17")
            self.end_headers()
            self.wfile.write(b'{"orgId": "org1"}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), KeepsAlive)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    op = HttpOperator(f"http://127.0.0.1:{server.server_address[1]}/_operator", "tok")
    try:
        assert op.create_org() == "org1" and op.create_org() == "org1"
        assert len(connections) == 1, "back-to-back calls share one kept-alive connection"
        time.sleep(0.6)
        assert op.create_org() == "org1"
        assert len(connections) == 2, "a connection idle past the expiry is not reused"
    finally:
        op.close()
        server.shutdown()
        server.server_close()
