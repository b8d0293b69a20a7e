"""No conformance test asserts the very error its operator fault injected.

An operator fault must break a dependency (a network that does not answer, a store that cannot record) and let
the target choose its answer; a test that injects `type=X` and then expects `X` back judges the harness, not
the target. A static scan of suites/: within one function, an `inject_fault(..., type=X)` whose `X` is also
among the error types an `expect_error(ex, status, types, ...)` of the same function expects.
"""

from __future__ import annotations

import ast
from pathlib import Path

SUITES = Path(__file__).resolve().parent.parent / "suites"
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _named(call: ast.Call, name: str) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == name) or (isinstance(func, ast.Name) and func.id == name)


def _strings(node: ast.AST | None, constants: dict[str, str]) -> set[str]:
    """The string literals in `node`, module-level string constants it names included."""
    found: set[str] = set()
    for inner in ast.walk(node) if node is not None else ():
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            found.add(inner.value)
        elif isinstance(inner, ast.Name) and inner.id in constants:
            found.add(constants[inner.id])
    return found


def _constants(tree: ast.Module) -> dict[str, str]:
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def _argument(call: ast.Call, index: int, name: str) -> ast.AST | None:
    if len(call.args) > index:
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def injected_answers(source: str) -> list[str]:
    """`function:line: type X` for each fault whose injected error type the same function expects back."""
    tree = ast.parse(source)
    constants = _constants(tree)
    found: set[str] = set()
    for function in (node for node in ast.walk(tree) if isinstance(node, FUNCTIONS)):
        calls = [node for node in ast.walk(function) if isinstance(node, ast.Call)]
        expected = set().union(*(_strings(_argument(c, 2, "type_"), constants) for c in calls
                                 if _named(c, "expect_error")))
        for call in (c for c in calls if _named(c, "inject_fault")):
            injected = _strings(next((kw.value for kw in call.keywords if kw.arg == "type"), None), constants)
            found.update(f"{function.name}:{call.lineno}: type {t}" for t in sorted(injected & expected))
    return sorted(found)


def test_the_scan_finds_an_injected_answer_and_passes_a_broken_dependency() -> None:
    injected = '''
KIND = "PAYOUT_OUTCOME_UNKNOWN"
def test_echo(operator, api):
    operator.inject_fault("org", "confirmPayoutFunding", "error", status=500, type=KIND)
    expect_error(api.op("confirmPayoutFunding"), 500, {"PAYOUT_OUTCOME_UNKNOWN", "INTERNAL"}, "what")
'''
    neutral = '''
def test_dependency(operator, api):
    operator.inject_fault("org", "payoutNetwork", "timeout")
    expect_error(api.op("confirmPayoutFunding"), 500, "PAYOUT_OUTCOME_UNKNOWN", "what")
def test_other_answer(operator, api):
    operator.inject_fault("org", "payoutBatchRun", "error", type="INTERNAL")
    expect_error(api.op("confirmPayoutBatch"), 409, "PAYOUT_BATCH_NOT_CONFIRMABLE", "INTERNAL is only named here")
'''
    assert injected_answers(injected) == ["test_echo:4: type PAYOUT_OUTCOME_UNKNOWN"]
    assert injected_answers(neutral) == []


def test_no_suite_asserts_the_error_type_it_injected() -> None:
    offenders = [f"{path.relative_to(SUITES.parent)}:{found}" for path in sorted(SUITES.rglob("*.py"))
                 for found in injected_answers(path.read_text())]
    assert not offenders, ("tests that inject through the operator the error type they then expect (break the "
                           "dependency instead and let the target answer):\n" + "\n".join(offenders))
