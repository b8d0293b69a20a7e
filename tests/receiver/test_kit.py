"""The kit against the example receiver: every check passes, quickly, and no artifact holds the secret."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from payconform import paths
from payconform.receiver import runner
from payconform.receiver.checks import CHECKS

from .conftest import example, serving


def run_kit(base: str, secret: str, report_dir: Path, state: bool = True, strict: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    code = runner.run(f"{base}/webhooks", secret, f"{base}/state" if state else None, report_dir, out, strict=strict)
    return code, out.getvalue()


def test_every_check_passes_against_the_example_in_under_30_seconds(secret: str, tmp_path: Path) -> None:
    with serving(example.Receiver(secret).app()) as base:
        code, out = run_kit(base, secret, tmp_path)
    assert code == 0, out
    data = json.loads((tmp_path / "results.json").read_text())
    assert [t["verdict"] for t in data["tests"]] == ["passed"] * len(CHECKS)
    assert {r["id"] for r in data["requirements"]} == {c.requirement for c in CHECKS}
    assert all(r["verdict"] == "passed" for r in data["requirements"])


def test_artifacts_are_valid_and_never_hold_the_secret(secret: str, tmp_path: Path) -> None:
    with serving(example.Receiver(secret).app()) as base:
        code, out = run_kit(base, secret, tmp_path, state=False)
        strict, strict_out = run_kit(base, secret, tmp_path / "strict", state=False, strict=True)
    # the state checks are skipped: the run passes and lists them with why; --strict fails on them
    assert code == 0 and out.splitlines()[-1] == "passed (3 checks skipped, listed above; --strict fails on a skip)"
    assert out.count("SKIPPED  receiver::") == 3 and out.count("needs --state-url") == 3, out
    assert strict == 1 and strict_out.splitlines()[-1] == "failed (3 checks skipped: --strict fails on a skip)"
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["run"]["ended"]["how"] == "complete"
    schema = json.loads((Path(paths.__file__).parent / "schemas" / "results.schema.json").read_text())
    jsonschema.validate(data, schema)
    skipped = [t for t in data["tests"] if t["outcome"] == "skipped"]
    assert {t["nodeid"] for t in skipped} == {f"receiver::{c.name}" for c in CHECKS if c.needs}
    assert all(t["skip_reason"].startswith("needs --state-url") for t in skipped)
    for name in ("results.json", "junit.xml", "index.html"):
        text = (tmp_path / name).read_text()
        assert secret not in text and secret.removeprefix("whsec_") not in text, name
    assert secret not in out
    assert "webhook receiver <code>" in (tmp_path / "index.html").read_text()


def test_a_wrong_secret_fails_checks_and_the_transcript_is_redacted(secret: str, tmp_path: Path) -> None:
    """The kit signs with another secret than the receiver's: valid deliveries fail, with evidence."""
    with serving(example.Receiver(secret).app()) as base:
        other = secret[:-4] + ("AAAA" if not secret.endswith("AAAA") else "BBBB")
        code, _ = run_kit(base, other, tmp_path, state=False)
    assert code == 1
    data = json.loads((tmp_path / "results.json").read_text())
    failed = {t["nodeid"]: t for t in data["tests"] if t["verdict"] == "failed"}
    assert "receiver::valid-deliveries" in failed
    row = failed["receiver::valid-deliveries"]
    assert row["message"].startswith("[RCV-SIGNED-CONTENT] Events > Delivery headers:")
    assert row["transcript"] and "401" in json.dumps(row["transcript"])
    assert other not in (tmp_path / "results.json").read_text()


def test_an_unreachable_receiver_exits_2_with_one_message(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    code = runner.run(f"http://127.0.0.1:{port}/webhooks", "whsec_" + "A" * 32, None, tmp_path, io.StringIO())
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach the receiver" in err[0]
    assert not (tmp_path / "results.json").exists()
