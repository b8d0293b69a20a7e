"""The fuzz phase's settings and what it reads from the contract documents.

``FuzzSettings``: ``suites/fuzz/fuzz.yaml`` (operations to fuzz, schemathesis settings, the requirement each
built-in check stands for), deep-merged with the target's ``profile: {fuzz: ...}`` and the command line
budget (``--fuzz-budget N`` examples per operation, ``--fuzz-max-requests N`` in all - by default what the
run's tier leaves the phase with the keys at hand, ``payconform.pacing.tiers`` - split evenly over the phase's tests,
whichever worker runs them) and seed
(``--fuzz-seed N``). The helpers below list a document's operations and the
properties it declares as decimal strings (money), which the checks and property tests need.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import yaml

from .. import contract as _contract
from ..plugin import DEFAULT_TIMEOUT
from ..options import FUZZ_SEED as SEED
from .properties import request_settings
from ..pacing.tiers import ONE_KEY, Pace, Tier

DOCUMENTS = ("payouts", "checkout")
SECONDS_PER_REQUEST = 2
DECIMAL_STRING_REF = "#/components/schemas/DecimalString"


@dataclass
class FuzzSettings:
    include: dict[str, Any]  # document -> list of operation ids, or "all"
    exclude: list[str]
    examples: int
    stateful_steps: int
    max_requests: int  # in all: each test of the phase may send its share (operation_cap), no more
    schemathesis: dict[str, Any]
    check_requirements: dict[str, list[str]]
    operation_requirements: dict[str, list[str]]
    seed: int = SEED
    phase_tests: int = 1  # the sweeps the run selected (suites/fuzz/conftest.py): max_requests' split
    shares: dict[str, int] = field(default_factory=dict)  # test nodeid -> its share (split), summing to max_requests

    @classmethod
    def load(cls, path: Path, overrides: Mapping[str, Any] | None = None, *, budget: int | None = None,
             max_requests: int | None = None, seed: int | None = None, tier: Tier | None = None,
             pace: Pace = ONE_KEY) -> FuzzSettings:
        """fuzz.yaml, the target's ``profile.fuzz`` overrides, the tier's fuzz budget at ``pace`` (the run's
        keys), then the command line."""
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if tier is not None:
            data = {**data, "max_requests": tier.fuzz_budget(pace),
                    **({"examples_per_operation": tier.fuzz_examples} if tier.fuzz_examples is not None else {})}
        if overrides:
            data = _contract.deep_merge(data, overrides)
        include = data.get("include_operations") or {}
        if include == "all" or isinstance(include, list):
            include = {doc: include for doc in DOCUMENTS}
        return cls(
            include=dict(include),
            exclude=list(data.get("exclude_operations") or []),
            examples=int(budget if budget is not None else data.get("examples_per_operation", 5)),
            stateful_steps=int(data.get("stateful_steps", 8)),
            max_requests=int(max_requests if max_requests is not None else data.get("max_requests", 0)),
            schemathesis=dict(data.get("schemathesis") or {}),
            check_requirements={k: list(v) for k, v in (data.get("check_requirements") or {}).items()},
            operation_requirements={k: list(v) for k, v in (data.get("operation_requirements") or {}).items()},
            seed=int(seed if seed is not None else SEED),
        )

    def timeout(self) -> int:
        """Seconds one fuzz test may run: the harness default plus a paced request or two per example, per step
        of a walk (the pacer, not the target, sets the pace of a deep run)."""
        return DEFAULT_TIMEOUT + SECONDS_PER_REQUEST * self.examples * max(self.stateful_steps, 1)

    def operation_cap(self, nodeid: str | None = None) -> int:
        """Requests one test of the phase may send (0: no cap): its share from ``split``, else an even share of
        ``max_requests``, so that a small budget still reaches every operation instead of the first ones alone."""
        if not self.max_requests:
            return 0
        return self.shares.get(nodeid or "") or -(-self.max_requests // max(self.phase_tests, 1))

    def split(self, properties: list[str], sweeps: list[str]) -> None:
        """Share ``max_requests`` over the phase's tests so that the shares add up to it, not more: each test
        gets the even part, the remainder goes to the property tests first (every example of theirs is one
        planned request, so a share of one or two checks nothing after their setup), then to the sweeps."""
        tests = properties + sweeps
        self.phase_tests = max(len(sweeps), 1)
        if not tests or not self.max_requests:
            self.shares = {}
            return
        even, left = divmod(self.max_requests, len(tests))
        extra = dict.fromkeys(tests, 0)
        if properties:
            for nodeid in properties:
                extra[nodeid] = left // len(properties)
            left %= len(properties)
        for nodeid in tests[:left]:
            extra[nodeid] += 1
        self.shares = {nodeid: max(1, even + extra[nodeid]) for nodeid in tests}

    def operations(self, doc: str, available: Iterable[str]) -> list[str]:
        """The operation ids of ``doc`` to fuzz, in the document's order."""
        wanted = self.include.get(doc) or []
        return [op for op in available if (wanted == "all" or op in wanted) and op not in self.exclude]

    def hypothesis_settings(self, max_examples: int | None = None, **extra: Any) -> hypothesis.settings:
        """The settings of every property over requests (`payconform.fuzz.properties`), at this run's budget."""
        # at budget 0 the phase is off and its tests skip; Hypothesis refuses 0 examples even to decorate them
        return request_settings(max(1, self.examples if max_examples is None else max_examples), **extra)


def _operations(document: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """(METHOD, path, operation) for every operation with an operationId, in document order."""
    for path, item in (document.get("paths") or {}).items():
        for method, op in (item or {}).items():
            if isinstance(op, Mapping) and op.get("operationId"):
                yield method.upper(), path, op


def operation_ids(document: Mapping[str, Any]) -> list[str]:
    """Every operationId of an OpenAPI document, in document order."""
    return [str(op["operationId"]) for _, _, op in _operations(document)]


def operation_labels(document: Mapping[str, Any]) -> dict[str, str]:
    """``METHOD /path`` (schemathesis' operation label) -> operationId."""
    return {f"{method} {path}": str(op["operationId"]) for method, path, op in _operations(document)}


def operation_id(operation: Any) -> str | None:
    """The operationId of a schemathesis APIOperation."""
    return operation.definition.raw.get("operationId")


def _is_decimal_string(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    if schema.get("$ref") == DECIMAL_STRING_REF:
        return True
    return any(_is_decimal_string(s) for key in ("anyOf", "oneOf", "allOf") for s in schema.get(key) or [])


def money_fields(documents: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Property names the contract declares as decimal strings (Conventions > Money), anywhere."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                names.update(str(name) for name, schema in properties.items() if _is_decimal_string(schema))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for doc in documents:
        walk(doc)
    return frozenset(names)


def request_amount_fields(document: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """operationId -> top-level request body properties declared as decimal strings (the amounts sent)."""
    out: dict[str, frozenset[str]] = {}
    for _, _, op in _operations(document):
        schema = (((op.get("requestBody") or {}).get("content") or {}).get("application/json") or {}).get("schema")
        amounts = frozenset(name for name, s in ((schema or {}).get("properties") or {}).items() if _is_decimal_string(s))
        if amounts:
            out[str(op["operationId"])] = amounts
    return out
