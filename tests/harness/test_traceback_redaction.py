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


FOREIGN_FRAME = '''
import pytest


def foreign_library_call(case_headers):  # a frame the harness cannot hide (schemathesis' Case.call)
    raise AssertionError("the target answered garbage")


@pytest.mark.req("DEMO-PASS")
def test_key_in_a_foreign_frame(target):
    foreign_library_call({"x-api-key": target.api_key})
'''


def test_a_secret_in_a_frame_outside_the_harness_is_redacted_from_the_report(pytester, monkeypatch,
                                                                           ref_target) -> None:
    from .fake_project import write_project

    write_project(pytester.path)
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    (pytester.path / "suites" / "endpoints" / "test_foreign.py").write_text(FOREIGN_FRAME)
    target, path = ref_target
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "suites/endpoints/test_foreign.py",
                                           "--target", str(path), "--report-dir", "out", "--tb=long",
                                           "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "case_headers = {'x-api-key': " in out  # the frame's arguments are shown ...
    assert target.api_key not in out  # ... without the key
    assert target.api_key not in (pytester.path / "junit.xml").read_text()
