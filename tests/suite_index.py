"""Which suite files name which requirement ids, read from their source without importing them.

Collecting the whole suite is costly (the fuzz suite builds schemathesis tests at collection), so runs
that only need the tests of a few requirements, such as a mutant's, collect only the files naming them.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "suites"


@lru_cache(maxsize=1)
def known_ids() -> frozenset[str]:
    catalog = yaml.safe_load((ROOT / "contract" / "requirements.yaml").read_text(encoding="utf-8"))
    return frozenset(r["id"] for r in catalog["requirements"])


@lru_cache(maxsize=1)
def ids_by_file() -> dict[Path, frozenset[str]]:
    """Every known requirement id written as a string literal in each suite test file."""
    ids = known_ids()
    index = {}
    for path in sorted(SUITES.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        index[path] = frozenset(n.value for n in ast.walk(tree)
                                if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in ids)
    return index


def files_naming(reqs: list[str]) -> list[Path]:
    wanted = set(reqs)
    return [path for path, ids in ids_by_file().items() if ids & wanted]
