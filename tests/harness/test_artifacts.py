"""The end-of-run scan finds a secret in any file a run wrote, and names it by kind only."""

from __future__ import annotations

from pathlib import Path

from payconform.results.artifacts import find_leaks
from payconform.signer import generate_private_key_pem

KEY = "svc_test_" + "a" * 32 + "_" + "B" * 43


def test_a_secret_in_any_file_is_found_and_named_by_kind(tmp_path: Path) -> None:
    (tmp_path / "allure-results").mkdir()
    (tmp_path / "allure-results" / "x-result.json").write_text(f'{{"headers": {{"x-api-key": "{KEY}"}}}}')
    (tmp_path / "junit.xml").write_text("<testsuite>svc_test_****</testsuite>")
    leaks = find_leaks(tmp_path, [KEY, "short"])
    assert [(leak.path.name, leak.kind) for leak in leaks] == [("x-result.json", "svc_test_…")]


def test_a_private_key_is_found_by_its_lines(tmp_path: Path) -> None:
    pem = generate_private_key_pem()
    body = [ln for ln in pem.splitlines() if "-----" not in ln]
    (tmp_path / "results.json").write_text("traceback: " + "\\n".join(body))
    assert [leak.kind for leak in find_leaks(tmp_path, [pem])] == ["a private key (PEM)"]
    assert find_leaks(tmp_path, []) == []
