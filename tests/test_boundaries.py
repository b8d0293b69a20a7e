"""The suite and the reference server share nothing but HTTP.

A test that passes because it shares code with the server proves nothing, so: nothing in the harness or
the suites imports `payconform.reference`, and the reference imports nothing else from `payconform`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "payconform" / "reference"


def _imports(path: Path) -> list[tuple[int, str]]:
    """Absolute module names imported by a file (relative imports resolved against its package)."""
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found += [(node.lineno, module)] + [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return found


def _files(*roots: Path, exclude: Path | None = None) -> list[Path]:
    return [p for r in roots for p in r.rglob("*.py") if exclude is None or exclude not in p.parents]


@pytest.mark.parametrize("path", _files(ROOT / "payconform", ROOT / "suites", exclude=REFERENCE),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_harness_and_suites_never_import_the_reference(path: Path) -> None:
    bad = [f"line {n}: {m}" for n, m in _imports(path) if m == "payconform.reference" or m.startswith("payconform.reference.")]
    assert not bad, f"{path.relative_to(ROOT)} imports the reference server: {bad}"


@pytest.mark.parametrize("path", _files(REFERENCE), ids=lambda p: str(p.relative_to(ROOT)))
def test_reference_imports_nothing_of_the_harness(path: Path) -> None:
    bad = [f"line {n}: {m}" for n, m in _imports(path)
           if m.split(".")[0] == "payconform" and not m.startswith("payconform.reference") and m != "payconform"]
    assert not bad, f"{path.relative_to(ROOT)} imports the harness: {bad}"


SUITES = ROOT / "suites"
HARNESS = ROOT / "payconform"
MAX_HARNESS_LINES = 400


def _names_a_test_module(module: str) -> bool:
    return any(part.startswith("test_") for part in module.split("."))


@pytest.mark.parametrize("path", _files(SUITES, ROOT / "tests", HARNESS), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_test_module(path: Path) -> None:
    """Test modules hold tests; what they share lives in a support module (suites/_support, tests' helpers)."""
    bad = [f"line {n}: {m}" for n, m in _imports(path) if _names_a_test_module(m)]
    assert not bad, f"{path.relative_to(ROOT)} imports a test module: {bad}"


@pytest.mark.parametrize("path", _files(SUITES), ids=lambda p: str(p.relative_to(ROOT)))
def test_suites_reach_the_harness_through_public_names(path: Path) -> None:
    """A suite uses what the harness publishes; a private name may change under it without notice."""
    bad = [f"line {n}: {m}" for n, m in _imports(path)
           if m.split(".")[0] == "payconform" and any(part.startswith("_") for part in m.split(".")[1:])]
    assert not bad, f"{path.relative_to(ROOT)} imports private harness names: {bad}"


@pytest.mark.parametrize("path", _files(HARNESS, exclude=REFERENCE), ids=lambda p: str(p.relative_to(ROOT)))
def test_harness_modules_stay_small(path: Path) -> None:
    """One job per module: a harness module past the bound is split along its concerns."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_HARNESS_LINES, f"{path.relative_to(ROOT)} has {lines} lines (at most {MAX_HARNESS_LINES})"


WIRING = {REFERENCE / "reference.py", REFERENCE / "app.py"}  # assemble the server: the operation table, the app


@pytest.mark.parametrize("path", [p for p in _files(REFERENCE, exclude=REFERENCE / "routes") if p not in WIRING],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_reference_domain_never_imports_routes(path: Path) -> None:
    """Routes translate HTTP and call the domain; the domain (and the operator API, the mutants) never calls a
    route module, so its rules stay reachable without HTTP and free of import cycles."""
    routes = "payconform.reference.routes"
    bad = [f"line {n}: {m}" for n, m in _imports(path) if m == routes or m.startswith(routes + ".")]
    assert not bad, f"{path.relative_to(ROOT)} imports the reference's routes: {bad}"
