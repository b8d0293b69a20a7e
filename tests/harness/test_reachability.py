"""A receiver the target can reach: the webhook flags, the static verdict, the probe and a fixed port.

A remote target without `webhooks.public_url` cannot post to a loopback receiver: the webhook tests skip with
one reason (never fail); with a public URL each worker confirms it with one delivery; a fixed listen port is
bound by one worker, which runs every test that uses the receiver.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from payconform.reachability import is_loopback, needs_probe, static_reason
from payconform.target import Target
from payconform.results.unlock import capability
from payconform.run import Run

ONE_WEBHOOK_TEST = "EVT-HEADER-TIMESTAMP"


def _target(base_url: str, **webhooks: str) -> Target:
    return Target.from_dict({"base_url": base_url, "org_id": "ckreachorg000000000000000",
                             "credentials": {"api_key": "svc_test_x"}, "webhooks": webhooks or None})


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("localhost", True), ("[::1]", True),
                                            ("0.0.0.0", True), ("api.localhost", True),
                                            ("10.0.0.7", False), ("sandbox.example.test", False)])
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_remote_target_without_public_url_cannot_reach_a_local_receiver() -> None:
    reason = static_reason(_target("https://sandbox.example.test/business/api/v1"))
    assert reason is not None and reason.startswith("needs receiver: ")
    assert "sandbox.example.test" in reason and "webhooks.public_url" in reason
    assert capability(reason) == "receiver"


def test_a_local_target_reaches_a_local_receiver() -> None:
    target = _target("http://127.0.0.1:8080/business/api/v1")
    assert static_reason(target) is None and not needs_probe(target)


def test_a_public_url_is_probed_not_assumed() -> None:
    target = _target("https://sandbox.example.test/business/api/v1", listen="127.0.0.1:0",
                     public_url="https://runner.example.test:8900")
    assert static_reason(target) is None and needs_probe(target)


def test_the_webhook_flags_set_the_webhooks_section() -> None:
    target = Target.from_dict({"base_url": "http://127.0.0.1:1/business/api/v1", "org_id": "o",
                               "credentials": {"api_key": "svc_test_x"}},
                              overrides={"webhook_listen": "0.0.0.0:8900",
                                         "webhook_public_url": "http://runner:8900"})
    assert target.webhooks == {"listen": "0.0.0.0:8900", "public_url": "http://runner:8900"}


def test_one_receiver_per_run_and_settings() -> None:
    run = Run()
    first = run.receiver("127.0.0.1:0", "http://example.invalid:1")
    assert run.receiver("127.0.0.1:0", "http://example.invalid:1") is first
    assert first.base_url == "http://example.invalid:1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path: Path, *flags: str) -> dict:
    report = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "payconform.cli", "run", "--select", ONE_WEBHOOK_TEST,
                           "--fuzz-budget", "0", "--workers", "0", "--report-dir", str(report), *flags],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((report / "results.json").read_text())


def _webhook_rows(results: dict) -> list[dict]:
    rows = [t for t in results["tests"] if ONE_WEBHOOK_TEST in (t.get("requirements") or [])]
    assert rows, "the selection ran no webhook test"
    return rows


def test_an_unreachable_public_url_skips_the_webhook_tests(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_free_port()}/hooks"
    rows = _webhook_rows(_run(tmp_path, "--webhook-public-url", dead))
    assert all(t["outcome"] == "skipped" and t["skip_reason"].startswith("needs receiver: ") for t in rows), rows
    assert all(dead in t["skip_reason"] for t in rows)


def test_a_fixed_port_with_its_public_url_is_confirmed_and_used(tmp_path: Path) -> None:
    port = _free_port()
    rows = _webhook_rows(_run(tmp_path, "--webhook-listen", f"127.0.0.1:{port}",
                              "--webhook-public-url", f"http://127.0.0.1:{port}"))
    assert all(t["outcome"] == "passed" for t in rows), rows
