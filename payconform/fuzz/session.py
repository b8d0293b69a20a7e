"""The fuzz phase's machinery: schemathesis (4.x) over the published contract, against the run's target.

The suite (``suites/fuzz``) says what to check; this module makes schemathesis behave like the rest of the
harness:

- ``FuzzSettings`` (``fuzz_settings``): what to fuzz, at which budget and seed.
- ``FuzzSession.schema(doc)``: a contract document loaded with the target's base URL and organization id,
  narrowed to the operations to fuzz, with a fixed seed (``SEED`` unless ``--fuzz-seed`` names another; it
  is printed in the run's header and in every fuzz failure) so that a run finds the same failures every
  time - the kill matrix depends on it, and a failing run can be reproduced. Its requests, and the probes
  schemathesis' checks send on their own, go out through the harness transport (``transport_schemathesis``):
  guarded, paced, deadlined, capped, retried after a 429 and recorded like every other request.
- Credentials come from the target's pool of equivalent test keys through a schemathesis auth provider (so
  schemathesis knows they are real and never re-adds one to a request that deliberately omits it), the
  least used key for each case, which spreads the load the way the ``api`` fixture does.
- ``prepare(case)`` before each call: the test's share of the phase's request budget (``ShareSpent`` ends the
  test once it is used), the organization, a fresh valid
  ``Idempotency-Key`` (generated ones repeat and would replay stored answers; an invalid or missing one is
  left alone so negative tests still mean something) and the least used key of the pool.
- ``run_case`` / ``run_stateful``: an operation whose case and own path both answer 404 ``ROUTE_NOT_FOUND`` is
  skipped as not implemented by the target (only such a case costs the probe of its path); the first failure of a test is recorded with the requirement it breaks,
  what the target answered, a curl reproduction (``fuzz_report``) and the ``x-request-id``, and the test
  fails with it once its run is over (``take_failure``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import hypothesis
import pytest
import schemathesis
from schemathesis import openapi
from schemathesis.errors import FailureGroup
from schemathesis.specs.openapi.checks import ignored_auth

from .. import contract as _contract
from ..pacing import accounting
from .. import paths
from . import walk_bodies
from ..results import records as _results
from .report import API_KEY_HEADER, SpecViolation, describe
from .served import not_served, placed, route_not_found
from .settings import DOCUMENTS, SEED, FuzzSettings, money_fields, operation_id, operation_ids, operation_labels, request_amount_fields
from ..context import RunContext
from ..pacing.tiers import Pace
from ..transport.sender import Transport, new_idempotency_key
from ..transport.schemathesis import HarnessTransport, bind

__all__ = ["DOCUMENTS", "SEED", "FuzzSession", "FuzzSettings", "ShareSpent", "SpecViolation", "configure", "current",
           "item_operation", "operation_id", "operation_ids", "settings_path"]

IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")
PLACEHOLDER_BASE_URL = "http://127.0.0.1:9/business/api/v1"  # no target: the plugin fails the tests anyway
PROBE_ID = "pc-probe"
MAX_WALK_RESTARTS = 3  # fresh starts of the stateful walks after Hypothesis stopped them (see run_stateful)
EXAMPLE_PROBABILITY = 0.7  # how often a generated body field takes a value from the profile's examples


@dataclass
class FuzzSession:
    settings: FuzzSettings
    run: RunContext  # its target (None when the run has none), contract, pacer and redactor
    sent_by_test: dict[str, int] = field(default_factory=dict)  # test nodeid -> requests it sent
    implemented: dict[str, bool] = field(default_factory=dict)
    started: dict[str, int] = field(default_factory=dict)  # test nodeid -> requests it was allowed to start
    failures: dict[str, str] = field(default_factory=dict)  # test nodeid -> its first failure
    documents: dict[str, dict] = field(default_factory=dict, repr=False)  # name -> the document as placed

    @property
    def target(self) -> Any:
        return self.run.target

    @property
    def contract(self) -> _contract.Contract:
        return self.run.contract if self.run.contract is not None else _contract.run_contract()

    @property
    def pacer(self) -> Any:
        return self.run.pacer

    @property
    def redactor(self) -> Any:
        return self.run.redactor

    # -- the contract ---------------------------------------------------------------------------

    def document(self, doc: str) -> dict:
        """A contract document (``payouts``, ``checkout``) with its operations where the profile puts them."""
        if doc not in self.documents:
            self.documents[doc] = placed(self.contract.openapi(doc), self.contract.profile.get("operations") or {})
        return self.documents[doc]

    def operations(self, doc: str) -> list[str]:
        return self.settings.operations(doc, operation_ids(self.document(doc)))

    @cached_property
    def money_fields(self) -> frozenset[str]:
        """Property names the contract declares as decimal strings, in either document."""
        return money_fields(self.document(doc) for doc in DOCUMENTS)

    @cached_property
    def _amounts(self) -> dict[str, frozenset[str]]:
        return {op: names for doc in DOCUMENTS for op, names in request_amount_fields(self.document(doc)).items()}

    def amount_fields(self, op_id: str) -> frozenset[str]:
        """The amounts an operation's request body carries (decimal-string properties at its top level)."""
        return self._amounts.get(op_id, frozenset())

    # -- schemathesis ---------------------------------------------------------------------------

    @cached_property
    def transport(self) -> Transport:
        """The harness transport every fuzz request goes out through (a placeholder target when the run has
        none: the plugin fails those tests before anything is sent)."""
        target = self.target or SimpleNamespace(base_url=PLACEHOLDER_BASE_URL, request_timeout=10.0)
        return Transport(target, run=self.run)

    def example_values(self) -> dict[str, list[Any]]:
        """``body.<path>`` -> the values the profile's example bodies use there (placeholders left out).

        Offered to schemathesis as dictionaries, so that generated requests are often valid: a walk through
        the links only goes somewhere once a create succeeds.
        """
        found: dict[str, list[Any]] = {}

        def walk(value: Any, path: str) -> None:
            if isinstance(value, Mapping):
                for key, item in value.items():
                    walk(item, f"{path}.{key}")
            elif isinstance(value, str) and "{" not in value:
                values = found.setdefault(path, [])
                if value not in values:
                    values.append(value)

        for op in (self.contract.profile.get("operations") or {}).values():
            if isinstance(op, Mapping) and isinstance(op.get("body"), Mapping):
                walk(op["body"], "body")
        return found

    def _example_body(self, op_id: str) -> Any:
        op = (self.contract.profile.get("operations") or {}).get(op_id)
        return op.get("body") if isinstance(op, Mapping) else None

    def config(self) -> schemathesis.Config:
        """fuzz.yaml's ``schemathesis`` settings plus this run's: target, organization, seed, budget, examples."""
        examples = self.example_values()
        names = {path: "profile-" + re.sub(r"[^A-Za-z0-9]+", "-", path) for path in examples}
        runtime = {
            "dictionaries": {names[path]: {"values": values} for path, values in examples.items()},
            "seed": self.settings.seed,
            "base-url": self.target.base_url if self.target else PLACEHOLDER_BASE_URL,
            "parameters": {
                "path.orgId": (self.target.org_id if self.target else None) or "unset",
                **{path: {"dictionary": names[path], "probability": EXAMPLE_PROBABILITY} for path in examples},
            },
            "generation": {"max-examples": max(1, self.settings.examples)},  # budget 0: the tests skip
        }
        return schemathesis.Config.from_dict(_contract.deep_merge(self.settings.schemathesis, runtime))

    def schema(self, doc: str, walks: bool = False) -> Any:
        """The contract document ``doc`` as a schemathesis schema for this target (may have no operations);
        for the stateful walks, with request bodies narrowed to the profile's examples (``walk_bodies``)."""
        document = (walk_bodies.narrow(self.document(doc), self._example_body) if walks
                    else copy.deepcopy(self.document(doc)))
        loaded = openapi.from_dict(document, config=self.config())
        schema = bind(loaded, HarnessTransport(self.transport, self.operation))
        schema = schema.include(operation_id=self.operations(doc) or ["-none-"])
        session = self

        @schema.auth(refresh_interval=None)
        class PoolKey:
            """A key of the target's pool of equivalent read+write test keys (``prepare`` picks which)."""

            def get(self, case: Any, ctx: Any) -> str | None:
                pool = session.target.pool if session.target else []
                return pool[0] if pool else None

            def set(self, case: Any, data: str | None, ctx: Any) -> None:
                if data:
                    case.headers = {**(case.headers or {}), API_KEY_HEADER: data}

        return schema

    # -- before each call -----------------------------------------------------------------------

    def prepare(self, case: Any) -> None:
        """Count against the test's share of the phase, pin the organization, refresh the idempotency key, pick
        the key. The shares add up to the phase's budget whichever worker runs which test: a cap per worker
        as well would skip the sweeps of a worker that drew more than its even part of them."""
        nodeid = self._nodeid()
        self.spend(nodeid)
        self.sent_by_test[nodeid] = self.sent_by_test.get(nodeid, 0) + 1
        if self.target and isinstance(case.path_parameters, dict) and "orgId" in case.path_parameters:
            case.path_parameters["orgId"] = self.target.org_id  # stateful walks ignore the `parameters` setting
        headers = case.headers if case.headers is not None else {}
        for name in list(headers):
            value = headers[name]
            if name.lower() == "idempotency-key" and isinstance(value, str) and IDEMPOTENCY_KEY.match(value):
                headers[name] = new_idempotency_key()
            elif name.lower() == API_KEY_HEADER and self.target and value in self.target.pool:
                headers[name] = self.pacer.least_loaded(self.target.pool)  # the least used key now

    def spend(self, nodeid: str | None = None, need: int = 1) -> None:
        """Before ``need`` requests of a fuzz test (a case, or an example of a property test): ``ShareSpent``
        once they would take the test past its share of the phase. The share counts every attempt the test sent
        (a route probe, the checks' own probes; not its fixtures', which are counted when its setup ends)."""
        nodeid = self._nodeid() if nodeid is None else nodeid
        share = self.settings.operation_cap(nodeid)
        if share and max(self.sent_by_test.get(nodeid, 0), accounting.sent(nodeid)) + need > share:
            raise ShareSpent(f"{nodeid} sent its share of the fuzz phase's budget: {share} requests")
        self.started[nodeid] = self.started.get(nodeid, 0) + 1

    def call(self, case: Any) -> Any:
        """Prepare ``case`` and send it (through the harness transport: see ``schema``)."""
        self.prepare(case)
        return case.call()

    def operation(self, case: Any) -> tuple[str | None, Mapping | None]:
        """(operation id, its profile entry) of a case: what the transport's live-key guard reads."""
        return self.entry(case.operation)

    def entry(self, operation: Any) -> tuple[str | None, Mapping | None]:
        """(operation id, its profile entry) of a schemathesis operation."""
        op_id = operation_id(operation)
        return op_id, (self.contract.profile.get("operations") or {}).get(op_id or "")

    # -- running a case -------------------------------------------------------------------------

    def ensure_implemented(self, operation: Any, anon: Any, answer: Any) -> None:
        """Skip an operation the target does not serve: a case answered 404 ROUTE_NOT_FOUND, and so is the
        operation's own path. Only such an answer needs the probe (a served route answers anything else, so
        the cases of a served operation cost no request of the phase's budget to tell it is served).

        The probe carries no credential and no body, so it cannot run anything.
        """
        label = operation.label
        if label not in self.implemented and route_not_found(answer.status_code, answer.headers, answer.content):
            path = re.sub(r"\{(?!orgId\})\w+\}", PROBE_ID, operation.path)
            ex = anon.request(operation.method.upper(), path, credential=None, idempotency_key=None, raw=True)
            self.implemented[label] = not route_not_found(ex.status, ex.headers, ex.content)
        elif label not in self.implemented:
            self.implemented[label] = True
        if not self.implemented[label]:
            not_served(*self.entry(operation), label)

    def run_case(self, case: Any, anon: Any) -> None:
        """Send one generated case and check the answer; once the test has a failure, send nothing more.

        One failure is enough to fail the operation; not spending the rest of its budget keeps a run against
        a broken target (or a mutant) short.
        """
        label = case.operation.label
        if self._nodeid() in self.failures:
            return
        if self.implemented.get(label) is False:
            not_served(*self.operation(case), label)
        response = self.call(case)
        self.ensure_implemented(case.operation, anon, response)
        self.validate(case, response)

    def validate(self, case: Any, response: Any) -> None:
        """Run the checks; the first failure is recorded for the test, which fails once its run is over.

        Raising inside Hypothesis would make it replay the failing case, and a replay against a live
        target is not the same request (names already taken, fresh idempotency keys): the report would be a
        Flaky error instead of the failure. So the run goes on and ``take_failure`` hands the failure to
        ``suites/fuzz/conftest.py``.
        """
        try:
            case.validate_response(response, excluded_checks=None if self._room() else [ignored_auth])
        except FailureGroup as exc:
            self.failures.setdefault(self._nodeid(), self.describe(case, response, exc))

    def _room(self) -> bool:
        """Whether the test's share has room for a check's own probe: ``ignored_auth`` resends the case without
        its key, a request of the phase like any other. Past the share the case is checked without it (every
        route's answer to a missing key is the authentication suite's check: AUTH-MISSING-KEY), so the phase
        keeps to its budget instead of spending one more request a case."""
        nodeid = self._nodeid()
        share = self.settings.operation_cap(nodeid)
        return not share or max(self.sent_by_test.get(nodeid, 0), accounting.sent(nodeid)) < share

    def take_failure(self, nodeid: str) -> str | None:
        """The failure a test recorded (None if it recorded none); forgets it."""
        return self.failures.pop(nodeid, None)

    @staticmethod
    def _nodeid() -> str:
        rec = _results.current()
        return rec.nodeid if rec is not None else ""

    def describe(self, case: Any, response: Any, group: FailureGroup) -> str:
        """The failure report of ``fuzz_report.describe`` for this run."""
        return describe(case, response, group, settings=self.settings, contract=self.contract,
                        redactor=self.redactor, operation_id=operation_id(case.operation),
                        document=self._doc_of(case))

    def run_stateful(self, schema: Any) -> None:
        """Random walks through the contract's OpenAPI links (create, then read, update, delete what was made).

        Which link a walk can follow depends on the target's answers (a create that succeeded once may be
        refused the next time: the name is taken now). Hypothesis notices that a choice it has seen before led
        elsewhere and stops with ``FlakyStrategyDefinition``; that says nothing about the target, and every
        answer up to there was checked. The walks then start afresh for the rest of the budget, a few times.
        """
        session = self
        machine = schema.as_state_machine()
        walked = [0]

        class Walk(machine):  # type: ignore[misc, valid-type]
            def call(self, case: Any, **kwargs: Any) -> Any:
                case.body = walk_bodies.refresh(case.body, session._example_body(operation_id(case.operation) or ""))
                return session.call(case)

            def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
                session.validate(case, response)

            def teardown(self) -> None:
                walked[0] += 1
                super().teardown()

        for _ in range(MAX_WALK_RESTARTS + 1):
            remaining = self.settings.examples - walked[0]
            if remaining <= 0 or self._nodeid() in self.failures:
                return
            try:
                Walk.run(settings=self.settings.hypothesis_settings(
                    max_examples=remaining, stateful_step_count=self.settings.stateful_steps))
                return
            except hypothesis.errors.FlakyStrategyDefinition:
                continue

    def _doc_of(self, case: Any) -> str:
        op_id = operation_id(case.operation)
        return next((d for d in DOCUMENTS if op_id in operation_ids(self.document(d))), "payouts")


class ShareSpent(BaseException):
    """A fuzz test sent its share of the phase's request budget: it ends, passing on what it checked.

    A BaseException, so that Hypothesis neither shrinks nor replays it as a failure; ``suites/fuzz/conftest.py``
    ends the test with it."""


# The one module-level handle of the fuzz phase: schemathesis builds its parametrization when a test module is
# imported, before any fixture exists, so the modules read the session of their process here (``current``).
_session: FuzzSession | None = None


def settings_path() -> Path:
    return paths.suites_dir() / "fuzz" / "fuzz.yaml"


def configure(config: pytest.Config) -> FuzzSession:
    """Build this process's session from the payconform plugin's state (called from suites/fuzz/conftest.py)."""
    global _session
    from ..plugin import STATE

    state = config.stash[STATE]
    contract = state.run.contract or _contract.run_contract()
    settings = FuzzSettings.load(
        settings_path(), (contract.profile or {}).get("fuzz"),
        budget=config.getoption("payconform_fuzz_budget", default=None),
        max_requests=config.getoption("payconform_fuzz_max_requests", default=None),
        seed=config.getoption("payconform_fuzz_seed", default=None),
        tier=state.tier,
        pace=Pace.of(state.target),
    )
    _session = state.run.fuzz = FuzzSession(settings, state.run)
    return _session


def item_operation(item: pytest.Item) -> str | None:
    """The operationId a schemathesis test item runs (None for other items)."""
    label = getattr(item, "operation_label", None)
    if not label or _session is None:
        return None
    return next((labels[label] for labels in (operation_labels(_session.document(d)) for d in DOCUMENTS)
                 if label in labels), None)


def current() -> FuzzSession | None:
    """This process's session (None until suites/fuzz/conftest.py configured one)."""
    return _session


