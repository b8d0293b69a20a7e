"""Headless Chromium for the browser tests of the report, the matrix and the annotated spec: find the binary,
load a page and read the DOM after its script ran (the pages keep their filter state in the query string)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def find() -> str:
    """The browser binary; skips the test without one."""
    found = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found is None:
        pytest.skip("no chromium binary on PATH (Debian: apt-get install -y chromium; .ci/run installs it)")
    return found


def chromium(browser: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args], check=False,
                          capture_output=True, text=True, timeout=120)


def dom(browser: str, tmp_path: Path, page: Path, query: str = "") -> str:
    res = chromium(browser, tmp_path, "--dump-dom", page.as_uri() + query)
    assert res.returncode == 0 and "</html>" in res.stdout, res.stderr[-2000:]
    return res.stdout
