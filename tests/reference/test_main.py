"""The command line: `--port 0`, the ready line, the token file, listing mutants, clean shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import httpx


def test_serves_on_a_free_port_and_stops_on_sigterm(tmp_path):
    token_file = tmp_path / "token"
    proc = subprocess.Popen(
        [sys.executable, "-m", "payconform.reference", "--port", "0", "--token-file", str(token_file),
         "--db", str(tmp_path / "ref.sqlite3")],
        stderr=subprocess.PIPE, text=True, env={"PATH": "/usr/bin:/bin"},
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("payconform reference listening on http://127.0.0.1:"), line
        base = line.split()[-1]
        token = token_file.read_text().strip()
        assert token and token not in line
        assert oct(token_file.stat().st_mode & 0o777) == "0o600"
        assert httpx.get(base + "/_operator/health").json() == {"ok": True}
        created = httpx.post(base + "/_operator/orgs", json={}, headers={"x-operator-token": token})
        assert created.status_code == 201
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # a stop for a hang, on a loaded machine


def test_refuses_to_start_without_a_token():
    result = subprocess.run([sys.executable, "-m", "payconform.reference", "--port", "0"],
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=120)
    assert result.returncode != 0 and "operator token" in result.stderr


def test_list_mutants():
    text = subprocess.run([sys.executable, "-m", "payconform.reference", "--list-mutants"],
                          capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in text.splitlines()]
    assert rows and all(len(r) == 3 and r[1] for r in rows)
    data = json.loads(subprocess.run([sys.executable, "-m", "payconform.reference", "--list-variants", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    assert {d["name"] for d in data} >= {"extra-fields", "detail-wording"}


def test_a_token_may_start_with_a_dash():
    from payconform.reference.__main__ import _attach_token_value, _parser

    args = _parser().parse_args(_attach_token_value(["--port", "0", "--operator-token", "-abc"]))
    assert args.operator_token == "-abc" and args.port == 0
