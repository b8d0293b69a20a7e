"""A request that fails at the transport leaves no credential in the traceback pytest prints and writes."""

from __future__ import annotations

import socket

pytest_plugins = ["pytester"]

KEY = "svc_test_" + "c" * 32 + "_" + "D" * 43

SUITE = '''
from payconform.client import Api
from payconform.target import Target


def test_dead_port():
    target = Target.from_dict({"base_url": "{url}", "org_id": "ck1", "credentials": {"api_key": "env:PC_TB_KEY"}})
    Api(target, target.api_key).get("/payments/organizations/{orgId}/balance")
'''


def test_a_transport_failure_traceback_holds_no_key(pytester, monkeypatch) -> None:
    monkeypatch.setenv("PC_TB_KEY", KEY)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/business/api/v1"
    sock.close()
    pytester.makepyfile(test_dead=SUITE.replace("{url}", url))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--tb=long", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    out = result.stdout.str() + result.stderr.str()
    assert "could not connect" in out
    assert KEY not in out, "the key appears in the console traceback"
    assert KEY not in (pytester.path / "junit.xml").read_text(), "the key appears in junit.xml"
