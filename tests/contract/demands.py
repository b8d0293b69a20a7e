"""Find what suite code demands of answers whose body the spec does not show, by reading its source (ast).

An exchange is *of* an operation when it is bound from a call that names the operation (``api.op("X")``,
``setup_call(api, contract, "X")``, ``expect_status(<such a call>, ...)``) or from a suite function that
returns one (found across all modules, to a fixed point). A *demand* on such an exchange is a field read:
``ex.json["k"]``, ``ex.json.get("k")``, the same on a name bound to ``ex.json``, or ``member(ex, "k", ...)``.

For an operation of the profile's catalog of unshown answers (``Contract.unshown_answers()``) a demand is
fine only through ``member`` and of a field the profile entry names: ``member`` is the accessor whose
failure names the profile entry. A direct read, or ``member`` of an unnamed field, is reported.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ACCESSOR = "member"
OP_CALLS = {"op": 0, "setup_call": 2}  # callee name -> index of the operation-id argument
PASS_THROUGH = {"expect_status"}  # callees that return their first argument


@dataclass(frozen=True)
class Demand:
    path: str
    line: int
    op_id: str
    field: str
    how: str  # "member" or "direct"
    via: str | None  # the suite function the exchange came from; None: straight from the operation's call

    def __str__(self) -> str:
        where = f" (from {self.via}())" if self.via else ""
        return f"{self.path}:{self.line}: {self.how} read of `{self.field}` in the answer of {self.op_id}{where}"


Origin = tuple[str, "str | None"]  # (operation id, the suite function that returned the exchange, if any)


def _callee(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return None


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Scope:
    """What one function (or module body) binds: names of exchanges and of their bodies, by operation."""

    def __init__(self, returns: Mapping[str, str]) -> None:
        self.returns = returns
        self.exchanges: dict[str, Origin] = {}
        self.bodies: dict[str, Origin] = {}

    def op_of(self, node: ast.AST) -> Origin | None:
        """Where the exchange ``node`` evaluates to comes from, if known."""
        if isinstance(node, ast.Name):
            return self.exchanges.get(node.id)
        name = _callee(node)
        if name is None:
            return None
        assert isinstance(node, ast.Call)
        if name in OP_CALLS and len(node.args) > OP_CALLS[name]:
            op = _const(node.args[OP_CALLS[name]])
            return (op, None) if op else None
        if name in PASS_THROUGH and node.args:
            return self.op_of(node.args[0])
        return (self.returns[name], name) if name in self.returns else None

    def body_of(self, node: ast.AST) -> Origin | None:
        """The operation whose parsed answer ``node`` evaluates to (``<exchange>.json`` or a name bound to it)."""
        if isinstance(node, ast.Attribute) and node.attr == "json":
            return self.op_of(node.value)
        if isinstance(node, ast.Name):
            return self.bodies.get(node.id)
        return None

    def bind(self, node: ast.Assign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None:
            return
        op, body = self.op_of(node.value), self.body_of(node.value)
        for target in targets:
            if isinstance(target, ast.Name):
                for table, value in ((self.exchanges, op), (self.bodies, body)):
                    if value is None:
                        table.pop(target.id, None)
                    else:
                        table[target.id] = value


def _functions(tree: ast.Module) -> list[ast.AST]:
    return [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))]


def _own_nodes(scope_node: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a function in source order, without those of the functions nested in it."""
    stack = list(reversed(list(ast.iter_child_nodes(scope_node))))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _walk_scope(scope_node: ast.AST, returns: Mapping[str, str], visit: Callable[[ast.AST, _Scope], None]) -> _Scope:
    scope = _Scope(returns)
    for node in _own_nodes(scope_node):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            scope.bind(node)
        visit(node, scope)
    return scope


def returning_functions(trees: Mapping[str, ast.Module]) -> dict[str, str]:
    """Function name -> the operation whose exchange it returns, over all ``trees``, to a fixed point."""
    returns: dict[str, str] = {}
    while True:
        found: dict[str, str] = {}
        for tree in trees.values():
            for fn in _functions(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue

                def visit(node: ast.AST, scope: _Scope, name: str = fn.name) -> None:
                    if isinstance(node, ast.Return) and node.value is not None:
                        origin = scope.op_of(node.value)
                        if origin is not None:
                            found[name] = origin[0]

                _walk_scope(fn, returns, visit)
        if found == returns:
            return returns
        returns = found


def demands(trees: Mapping[str, ast.Module], returns: Mapping[str, str]) -> list[Demand]:
    """Every field read of an exchange of a known operation in ``trees`` (path -> parsed module), given the
    functions that return exchanges (``returning_functions``)."""
    found: list[Demand] = []
    for path, tree in trees.items():
        for fn in _functions(tree):
            def visit(node: ast.AST, scope: _Scope, path: str = path) -> None:
                read = None
                if isinstance(node, ast.Subscript):
                    read = scope.body_of(node.value), _const(node.slice), "direct"
                elif _callee(node) == "get" and isinstance(node.func, ast.Attribute) and node.args:
                    read = scope.body_of(node.func.value), _const(node.args[0]), "direct"
                elif _callee(node) == ACCESSOR and len(node.args) > 1:
                    read = scope.op_of(node.args[0]), _const(node.args[1]), "member"
                if read is not None and read[0] is not None and read[1] is not None:
                    (op, via), field, how = read
                    found.append(Demand(path, node.lineno, op, field, how, via))

            _walk_scope(fn, returns, visit)
    return sorted(set(found), key=lambda d: (d.path, d.line, d.field))


def vouched(found: Iterable[Demand], trees: Mapping[str, ast.Module], returns: Mapping[str, str]) -> dict[str, set[str]]:
    """Suite function -> the fields it reads with ``member`` of the exchange it returns (so a caller's direct
    read of one of them comes after a check whose failure names the profile entry)."""
    spans = {fn.name: (path, fn.lineno, fn.end_lineno or fn.lineno) for path, tree in trees.items()
             for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in returns}
    out: dict[str, set[str]] = {name: set() for name in spans}
    for d in found:
        for name, (path, start, end) in spans.items():
            if d.how == "member" and d.path == path and start <= d.line <= end and d.op_id == returns[name]:
                out[name].add(d.field)
    return out


def unnamed(found: Iterable[Demand], named: Mapping[str, set[str]], checked: Mapping[str, set[str]]) -> list[Demand]:
    """The demands on an unshown answer (an operation of ``named``: op id -> the fields its profile entry
    names) that do not name the profile entry: ``member`` or a direct read of a field the entry does not name,
    or a direct read that no ``member`` check of the function the exchange came from (``checked``) preceded."""
    return [d for d in found if d.op_id in named and (
        d.field not in named[d.op_id] or d.how == "direct" and d.field not in checked.get(d.via or "", set()))]


def unnamed_demands(trees: Mapping[str, ast.Module], named: Mapping[str, set[str]]) -> list[Demand]:
    """``unnamed`` over everything ``trees`` demands."""
    returns = returning_functions(trees)
    found = demands(trees, returns)
    return unnamed(found, named, vouched(found, trees, returns))


def parse(root: Path) -> dict[str, ast.Module]:
    """Every module under ``root``, parsed, by path relative to ``root``'s parent."""
    return {str(p.relative_to(root.parent)): ast.parse(p.read_text(encoding="utf-8"), filename=str(p))
            for p in sorted(root.rglob("*.py"))}
