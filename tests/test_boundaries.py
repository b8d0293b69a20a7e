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


SURFACE = "payconform.suite"


@pytest.mark.parametrize("path", _files(SUITES), ids=lambda p: str(p.relative_to(ROOT)))
def test_suites_import_only_the_public_surface(path: Path) -> None:
    """A suite (its tests, `_support`, its conftest files) reaches the harness through `payconform.suite` alone:
    what it needs of the run is asked of the `Run`, never of the modules that pace, count or record."""
    bad = [f"line {n}: {m}" for n, m in _imports(path)
           if m.split(".")[0] == "payconform" and m != SURFACE and not m.startswith(SURFACE + ".")]
    assert not bad, f"{path.relative_to(ROOT)} imports harness modules other than {SURFACE}: {bad}"


# The harness's module-level mutable state, each with why it cannot live in the run (`payconform.run.Run`).
MODULE_STATE = {
    "payconform/pacing/accounting.py": {
        "_tallies": "the process's request counts: the operator adapter and the CLI's preflight count into them too",
        "_phase": "the scope counted outside tests (the CLI's preflight phase)",
        "_lock": "guards the tallies across the threads of a test",
    },
    "payconform/contract.py": {
        "_PARSED": "a cache of parsed contract documents, immutable once read",
        "_current": "the run's contract, read at import by suites that parametrize over the catalogs",
        "_default": "the repository's contract, loaded once outside a run",
    },
    "payconform/fuzz/session.py": {
        "_session": "schemathesis parametrizes the fuzz modules at import, before any fixture exists",
    },
    "payconform/redact.py": {
        "_default": "the process's secrets: the operator adapter and provisioning register keys before a run exists",
    },
    "payconform/results/records.py": {
        "_global_record": "the running test's record for threads it starts (they do not inherit context variables)",
    },
    "payconform/checks/rules.py": {"RULES": "the registry the rule decorator fills at import"},
    "payconform/receiver/checks.py": {"CHECKS": "the registry the check decorator fills at import"},
}
_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "clear", "remove",
             "discard"}


def _module_state(path: Path) -> set[str]:
    """Module-level names the module rebinds (``global``) or mutates (item assignment, a mutating method), and
    module-level instances of the module's own classes (but constants: sentinels) or of ``threading``'s locks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    top, made = set(), set()
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if value is not None else []
        for name in (t.id for t in targets if isinstance(t, ast.Name)):
            top.add(name)
            func = value.func if isinstance(value, ast.Call) else None
            if (isinstance(func, ast.Name) and func.id in classes and not name.isupper()) or (
                    isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "threading"):
                made.add(name)
    rebound = {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    changed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
            changed |= {t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS \
                and isinstance(node.func.value, ast.Name):
            changed.add(node.func.value.id)
    return (changed & top) | rebound | made


@pytest.mark.parametrize("path", _files(HARNESS, exclude=REFERENCE), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_state_is_only_what_is_listed(path: Path) -> None:
    """What a run shares lives in its `Run`, handed to whatever sends or records; a module keeps state of its
    own only where `MODULE_STATE` says why."""
    allowed = set(MODULE_STATE.get(str(path.relative_to(ROOT)), {}))
    unlisted = sorted(_module_state(path) - allowed)
    assert not unlisted, f"{path.relative_to(ROOT)} keeps module-level mutable state not in MODULE_STATE: {unlisted}"


def test_module_state_allow_list_names_what_exists() -> None:
    """An entry of `MODULE_STATE` whose state is gone is removed with it."""
    stale = {f"{file}: {name}" for file, names in MODULE_STATE.items()
             for name in set(names) - _module_state(ROOT / file)}
    assert not stale, f"MODULE_STATE lists state that no longer exists: {sorted(stale)}"
