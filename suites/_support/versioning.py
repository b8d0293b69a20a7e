"""What the contract marks as added by the Versioning part (`x-versioning-added`), and checks of answers
against it.

Rules 6 and 7 name fields and enum values; the spec gives their types only through the contract, so the
JSON type of each is the contract's. Unknown enum values are tolerated (Versioning rule 2: additions are
safe to ignore), so an enum-valued field is checked for its type, never for membership.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from payconform.suite import Contract, Exchange, run_contract

from .schemas import component, problems

PLACEHOLDER = re.compile(r"\{(\w+)\}")
MARK = "x-versioning-added"


def added_operations(contract: Contract) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(operationId, METHOD, path, operation) of every operation marked as added (rule 8), in document order."""
    for _, method, path, op in contract.openapi_operations():
        if op.get(MARK) == "operation":
            yield op["operationId"], method, path, op


def probe_path(path: str, probe: str) -> str:
    """The contract path with every id but `{orgId}` replaced by ``probe`` (an id no resource has)."""
    return PLACEHOLDER.sub(lambda m: m.group(0) if m.group(1) == "orgId" else probe, path)


def documented(op: dict[str, Any], status: int) -> bool:
    """Whether the contract lists ``status`` (or its class, `4XX`) among the operation's responses."""
    responses = {str(code).upper() for code in op.get("responses") or {}}
    return str(status) in responses or f"{status // 100}XX" in responses


class Seen:
    """Per worker: the first answers the run's own requests got from each operation that show something any
    answer of it would: a success of each status the contract documents for it, at its contract path (the
    operation is served, Versioning rule 8; its answer carries what the operation answers); and the first
    refusal of each error type the contract documents for it. A transport observer (`Run.observe`): the
    versioning tests check their rules on these answers and send only for what the run did not get."""

    def __init__(self) -> None:
        self.successes: dict[tuple[str, int], Exchange] = {}
        self.refusals: dict[tuple[str, str], Exchange] = {}
        self.lock = threading.Lock()
        self._paths: dict[str, tuple[re.Pattern[str], dict[str, Any]]] | None = None

    def note(self, ex: Exchange) -> None:
        """Keep ``ex`` if it is the first such answer of its operation (an observer: never raises)."""
        try:
            found = self._operations().get(ex.op_id or "")
            at_path = found and found[0].search(urlsplit(str(ex.request.url)).path)
            if not at_path or not documented(found[1], ex.status):
                return
            error = ex.json.get("type") if ex.status >= 400 and isinstance(ex.json, dict) else None
            with self.lock:
                if 200 <= ex.status < 300:
                    self.successes.setdefault((str(ex.op_id), ex.status), ex)
                elif isinstance(error, str):
                    self.refusals.setdefault((str(ex.op_id), error), ex)
        except Exception:  # noqa: BLE001 - an observer must not break the request that it watches
            return

    def success(self, op_id: str, statuses: set[int] | None = None) -> Exchange | None:
        """The first success of ``op_id`` noted (of one of ``statuses``, if given), or None."""
        with self.lock:
            return next((ex for (op, status), ex in self.successes.items()
                         if op == op_id and (statuses is None or status in statuses)), None)

    def refusal(self, op_id: str, error_type: str) -> Exchange | None:
        with self.lock:
            return self.refusals.get((op_id, error_type))

    def _operations(self) -> dict[str, tuple[re.Pattern[str], dict[str, Any]]]:
        if self._paths is None:
            self._paths = {op["operationId"]: (re.compile(PLACEHOLDER.sub("[^/]+", re.escape(path).replace(r"\{", "{")
                                                                         .replace(r"\}", "}")) + "$"), op)
                           for _, _, path, op in run_contract().openapi_operations() if op.get("operationId")}
        return self._paths


SEEN = Seen()  # this worker's


def type_problems(contract: Contract, schema_name: str, obj: Any, kinds: tuple[str, ...] = ("field",)) -> list[str]:
    """For each property of ``schema_name`` marked with one of ``kinds`` that ``obj`` carries: what is wrong
    with its JSON type (or instant format), per the contract's tolerant schema. Empty when all are right or
    none is present."""
    _, schema = component(contract, schema_name)
    found = []
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict) or prop.get(MARK) not in kinds or not isinstance(obj, dict) or name not in obj:
            continue
        wrong = problems(contract, {k: v for k, v in prop.items() if k not in ("enum", "const")}, obj[name])
        if wrong:
            found.append(f"`{name}` {wrong[0]} (contract {schema_name}.{name})")
    return found
