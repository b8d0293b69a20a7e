"""The command line end to end: the example started as its README says, the kit as `python -m`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from .conftest import ROOT, new_secret


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_kit_passes_against_the_example_app(tmp_path: Path) -> None:
    secret, port = new_secret(), _free_port()
    app = subprocess.Popen([sys.executable, str(ROOT / "examples" / "receiver" / "app.py"), "--port", str(port),
                            "--secret", secret], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60  # a stop for a hang, on a loaded machine
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/state/payouts/none", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        kit = subprocess.run([sys.executable, "-m", "payconform.receiver", "--url", f"{base}/webhooks",
                              "--secret", "env:RECEIVER_SECRET", "--state-url", f"{base}/state",
                              "--report-dir", str(tmp_path)], env=dict(os.environ, RECEIVER_SECRET=secret),
                             capture_output=True, text=True, timeout=300)
    finally:
        app.terminate()
        app.wait(10)
    assert kit.returncode == 0, kit.stdout + kit.stderr
    assert "18 passed, 0 failed, 0 skipped" in kit.stdout
    assert {p.name for p in tmp_path.iterdir()} >= {"results.json", "junit.xml", "index.html"}
    assert secret not in kit.stdout + kit.stderr


def test_a_secret_without_its_prefix_is_refused() -> None:
    kit = subprocess.run([sys.executable, "-m", "payconform.receiver", "--url", "http://127.0.0.1:9/x",
                          "--secret", "not-a-secret"], capture_output=True, text=True, timeout=120)
    assert kit.returncode == 2 and "whsec_" in kit.stderr


def test_add_parser_registers_the_subcommand_on_the_main_cli() -> None:
    import argparse

    from payconform.receiver import cli

    parser = argparse.ArgumentParser(prog="payconform")
    cli.add_parser(parser.add_subparsers(dest="command"))
    ns = parser.parse_args(["receiver", "--url", "http://127.0.0.1:9/hook", "--secret", "env:S",
                            "--state-url", "http://127.0.0.1:9/state"])
    assert (ns.command, ns.url, ns.secret, ns.state_url, ns.report_dir) == \
        ("receiver", "http://127.0.0.1:9/hook", "env:S", "http://127.0.0.1:9/state", None)
