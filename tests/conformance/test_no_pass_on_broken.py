"""No conformance test passes against a broken target or with a refused key.

Two runs of the parts where such passes were found (authentication, conventions, resources, versioning and
the stateless fuzz of a few operations), each bypassing the preflight (pytest over ``suites/`` directly, as a
user's own pytest run would), which would otherwise stop both runs at once with exit code 2:

- against a loopback server that answers ``{}`` with 200 and ``application/json`` to every request;
- against the reference with a well-formed ``svc_test_`` key it never issued (every request refused 401).

A test that passes there passed on something it never saw, unless its requirement is about the target file
itself or it checks an answer that does not depend on the run's key: those are listed below, each with why.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from payconform.provision import provision_reference
from payconform.refserver import RefServer

from .conftest import ROOT

pytestmark = pytest.mark.xdist_group("reference-runs")

PARTS = ["suites/authentication", "suites/conventions", "suites/resources", "suites/versioning",
         "suites/fuzz/test_stateless.py"]
# the fuzz tests of a few operations: a plain read, a read with limit rules, a create, and the public submit
FUZZ_OPERATIONS = "not fuzz or balance or beneficiaries] or payout-links or webhook-endpoints]"
MADE_UP_KEY = "svc_test_" + "0123456789abcdef" * 2 + "_" + "A" * 43  # the documented format, never issued
RUN_TIMEOUT = 900  # seconds: a stop for a hung run, with room for a loaded machine

# Tests that may pass on either broken target, and why.
ALLOWED_ALWAYS = {
    # CONV-ORGID-OPAQUE is about the organization id the target file names, not about any answer
    "suites/conventions/test_ids.py::test_org_id_is_cuid_shaped",
}
ALLOWED_ON_EMPTY = ALLOWED_ALWAYS | {
    # KEY-FORMAT is about the keys the target file holds (a made-up key in the documented format here)
    "suites/authentication/test_key_header.py::test_configured_keys_have_documented_format",
    # CONV-JSON-CONTENT-TYPE on a successful read: `{}` with application/json is exactly what it checks
    "suites/conventions/test_content_type.py::test_response_is_json[[]get-200[]]",
}
ALLOWED_ON_REFUSED_KEY = ALLOWED_ALWAYS | {
    # answers to a request without a key or to a route that does not exist: the same whatever the run's key
    "suites/conventions/test_content_type.py::test_response_is_json[[]no-key-401[]]",
    "suites/conventions/test_content_type.py::test_response_is_json[[]unknown-route-404[]]",
    "suites/conventions/test_request_id.py::test_*[[]no-key-401[]]",
    "suites/conventions/test_request_id.py::test_*[[]unknown-route-404[]]",
    "suites/resources/test_error_body.py::test_error_body_fields[[]no-key-401[]]",
    "suites/resources/test_error_body.py::test_error_body_fields[[]unknown-route-404[]]",
    "suites/conventions/test_route_not_found.py::test_unknown_route_is_route_not_found[[]*[]]",
    # the payout-link submit is public (the link's token is its credential): the run's key plays no part
    "suites/fuzz/test_stateless.py::test_payouts_contract[[]POST /payout-links/{token}/submit[]]",
    # dashboard-only operations (x-dashboard-only: webhook endpoint management and key rotation, the paths
    # under /organizations/{orgId}/) refuse every API key by rule: the fuzz test checks that refusal, whichever
    # key is refused
    "suites/fuzz/test_stateless.py::test_payouts_contract[[]* /organizations/{orgId}/*[]]",
}


class _EmptyJson(BaseHTTPRequestHandler):
    """200, application/json, `{}`, whatever was asked."""

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_TRACE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def empty_json_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmptyJson)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/business/api/v1"
    server.shutdown()
    server.server_close()


def _passed(tmp: Path, base_url: str, org_id: str, other_org_id: str) -> set[str]:
    """The tests of ``PARTS`` that pass against ``base_url`` with the made-up key (preflight bypassed)."""
    target = tmp / "target.yaml"
    target.write_text(yaml.safe_dump({
        "base_url": base_url, "org_id": org_id, "other_org_id": other_org_id,
        "credentials": {"api_key": MADE_UP_KEY}, "operator": {"adapter": "none"},
        "rate_limit": 5000, "ip_rate_limit": 50000,
    }), encoding="utf-8")
    report = tmp / "report"
    cmd = [sys.executable, "-m", "pytest", *PARTS, "-o", "addopts=", "-p", "no:cacheprovider", "-p", "no:randomly",
           "-p", "no:allure_pytest", "-p", "no:xdist", "-q", "-k", FUZZ_OPERATIONS, "--target", str(target),
           "--report-dir", str(report), "--fuzz-budget", "1"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    results = report / "results.json"
    assert results.exists(), f"no results.json (exit {proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}"
    tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    assert len(tests) > 100, f"the run collected {len(tests)} tests:\n{proc.stdout[-2000:]}"
    return {t["nodeid"] for t in tests if t["outcome"] == "passed"}


def _unexpected(passed: set[str], allowed: set[str]) -> list[str]:
    return sorted(n for n in passed if not any(fnmatch.fnmatchcase(n, pattern) for pattern in allowed))


def test_nothing_passes_against_a_server_answering_empty_json(empty_json_server: str, tmp_path: Path) -> None:
    passed = _passed(tmp_path, empty_json_server, "cpayconformorg0000000000000", "cpayconformother00000000000")
    wrong = _unexpected(passed, ALLOWED_ON_EMPTY)
    assert not wrong, "passed against a server answering `{}` to everything:\n" + "\n".join(wrong)


def test_nothing_passes_with_a_key_the_target_refuses(tmp_path: Path) -> None:
    with RefServer() as server:
        issued = provision_reference(server, pool_size=1)
        passed = _passed(tmp_path, server.base_url, issued.org_id, issued.other_org_id)
    wrong = _unexpected(passed, ALLOWED_ON_REFUSED_KEY)
    assert not wrong, "passed with a key the reference never issued:\n" + "\n".join(wrong)
