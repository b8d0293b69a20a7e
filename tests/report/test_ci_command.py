"""CI runs exactly the README's test command, after installing what the report's browser test needs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"```sh\n(python3 -m venv .*pytest.*)\n```", readme).group(1)
    assert ci.rstrip().splitlines()[-1] == command
    assert "apt-get install -y -qq chromium" in ci
