"""Each mutant of the example receiver is killed by a check of the requirement it breaks."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from payconform.receiver import runner

from .conftest import serving
from .mutants import MUTANTS


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_kit_kills_the_mutant(name: str, secret: str, tmp_path: Path) -> None:
    requirement, cls = MUTANTS[name]
    with serving(cls(secret).app()) as base:
        code = runner.run(f"{base}/webhooks", secret, f"{base}/state", tmp_path, io.StringIO())
    assert code == 1
    tests = json.loads((tmp_path / "results.json").read_text())["tests"]
    killers = [t["nodeid"] for t in tests if t["verdict"] == "failed" and requirement in t["requirements"]]
    assert killers, f"{name}: no failing check names {requirement}"
