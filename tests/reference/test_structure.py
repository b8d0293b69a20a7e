"""The reference server's module structure: no import circle outside the assembly, and small modules.

Domain modules state what they reach of the server with Protocols (`Call[PayoutServer]`, `OperatorServer`)
instead of importing the Reference, so only the modules that assemble the server may import everything.
Imports under `TYPE_CHECKING` count: a circle of types is still a circle to a reader. `mutants/` is read as
a whole (its own tests judge its inside): no module outside the assembly may import it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "payconform.reference"
ROOT = Path(__file__).resolve().parents[2] / "payconform" / "reference"
MAX_LINES = 400
# The modules that assemble the server from its parts; only they may import (transitively) everything.
ASSEMBLY = {
    PACKAGE + ".reference",
    PACKAGE + ".app",
    PACKAGE + ".__main__",
    PACKAGE + ".routes",
    PACKAGE + ".operator",
}
MUTANTS = PACKAGE + ".mutants"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _as_node(name: str) -> str:
    """Every module under mutants/ is one node: the package the other modules may or may not import."""
    return MUTANTS if name == MUTANTS or name.startswith(MUTANTS + ".") else name


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The modules of the package one import statement names (`from . import x` names module `x`)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - node.level + 1]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    found = set()
    for alias in node.names:
        child = f"{target}.{alias.name}"
        found.add(child if child in known else target)
    return found & known


def _imports(tree: ast.AST, type_checking: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module, with or without those under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and not type_checking and "TYPE_CHECKING" in ast.unparse(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    return found


def import_graph(type_checking: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (TYPE_CHECKING imports included unless told)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(_as_node(module), set())
        for node in _imports(ast.parse(path.read_text(encoding="utf-8")), type_checking):
            edges |= {_as_node(name) for name in _imported(module, path, node, known)}
        edges.discard(_as_node(module))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_type_checking_imports() -> None:
    graph = import_graph()
    assert PACKAGE + ".reference" in graph[PACKAGE + ".app"]
    at_run_time = import_graph(type_checking=False)
    assert any(graph[module] - at_run_time[module] for module in graph)


def test_no_circle_outside_the_assembly() -> None:
    graph = import_graph()
    without_assembly = {module: set() if module in ASSEMBLY else edges for module, edges in graph.items()}
    assert cycles(without_assembly) == []


def test_only_the_assembly_imports_the_reference_or_the_mutants() -> None:
    graph = import_graph()
    wrong = sorted(
        (module, target) for module, edges in graph.items() if module not in ASSEMBLY and module != MUTANTS
        for target in edges & {PACKAGE + ".reference", MUTANTS, *ASSEMBLY}
    )
    assert wrong == []


@pytest.mark.parametrize("module", sorted(m for m in _modules() if _as_node(m) != MUTANTS))
def test_module_is_at_most_400_lines(module: str) -> None:
    lines = len(_modules()[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines"
