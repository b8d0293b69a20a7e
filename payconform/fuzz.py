"""The fuzz phase's machinery: schemathesis (4.x) over the published contract, against the run's target.

The suite (``suites/fuzz``) says what to check; this module makes schemathesis behave like the rest of the
harness:

- ``FuzzSettings``: ``suites/fuzz/fuzz.yaml`` (operations to fuzz, schemathesis settings, the requirement
  each built-in check stands for), deep-merged with the target's ``profile: {fuzz: ...}`` and the command
  line budget (``--fuzz-budget N`` examples per operation, ``--fuzz-max-requests N`` in all, split evenly
  over the xdist workers) and seed (``--fuzz-seed N``).
- ``FuzzSession.schema(doc)``: a contract document loaded with the target's base URL and organization id,
  narrowed to the operations to fuzz, with a fixed seed (``SEED`` unless ``--fuzz-seed`` names another; it
  is printed in the run's header and in every fuzz failure) so that a run finds the same failures every
  time - the kill matrix depends on it, and a failing run can be reproduced.
- Credentials come from the target's pool of equivalent test keys through a schemathesis auth provider (so
  schemathesis knows they are real and never re-adds one to a request that deliberately omits it), the
  least used key for each case, which spreads the load the way the ``api`` fixture does.
- Global ``before_call``/``after_call`` hooks (schemathesis registers ``before_call`` globally only): a fresh
  valid ``Idempotency-Key`` per call (generated ones repeat and would replay stored answers; an invalid or
  missing one is left alone so negative tests still mean something), the live-key guard, the per-process
  request cap, and each exchange in the test's transcript (redacted). Pacing through the harness pacer wraps
  schemathesis' requests transport, so the probes its checks send past the hooks are paced too.
- ``run_case`` / ``run_stateful``: an operation whose own path answers 404 ``ROUTE_NOT_FOUND`` is skipped as
  not implemented by the target; the first failure of a test is recorded with the requirement it breaks,
  what the target answered, a curl reproduction (the credential replaced by ``$PAYCONFORM_API_KEY``) and
  the ``x-request-id``, and the test fails with it once its run is over (``take_failure``).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
import yaml
from schemathesis import openapi
from schemathesis.errors import FailureGroup
from schemathesis.transport.requests import REQUESTS_TRANSPORT

from . import contract as _contract
from . import paths, walk_bodies
from . import results as _results
from .client import (
    MAX_429_RETRIES,
    MAX_RETRY_AFTER,
    WRITE_METHODS,
    SafetyError,
    new_idempotency_key,
)
from .plugin import DEFAULT_TIMEOUT
from .plugin import FUZZ_SEED as SEED
from .properties import request_settings
from .redact import MASK

DOCUMENTS = ("payouts", "checkout")
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,255}$")
API_KEY_HEADER = "x-api-key"
PLACEHOLDER_BASE_URL = "http://127.0.0.1:9/business/api/v1"  # no target: the plugin fails the tests anyway
PROBE_ID = "pc-probe"
TRANSCRIPT_BODY = 2048
MAX_FAILURE_TEXT = 1500
MAX_WALK_RESTARTS = 3  # fresh starts of the stateful walks after Hypothesis stopped them (see run_stateful)
SECONDS_PER_REQUEST = 2
EXAMPLE_PROBABILITY = 0.7  # how often a generated body field takes a value from the profile's examples
DECIMAL_STRING_REF = "#/components/schemas/DecimalString"
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SpecViolation(AssertionError):
    """Raised by the suite's custom checks: what the target did, against which requirement."""

    def __init__(self, requirement: str, what: str) -> None:
        super().__init__(f"[{requirement}] {what}")
        self.requirement = requirement
        self.what = what


# ---------------------------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------------------------


@dataclass
class FuzzSettings:
    include: dict[str, Any]  # document -> list of operation ids, or "all"
    exclude: list[str]
    examples: int
    stateful_steps: int
    max_requests: int  # in all: each of the run's processes may send its share
    schemathesis: dict[str, Any]
    check_requirements: dict[str, list[str]]
    operation_requirements: dict[str, list[str]]
    seed: int = SEED

    @classmethod
    def load(cls, path: Path, overrides: Mapping[str, Any] | None = None, *, budget: int | None = None,
             max_requests: int | None = None, seed: int | None = None) -> FuzzSettings:
        """fuzz.yaml, the target's ``profile.fuzz`` overrides, then the command line."""
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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

    def process_cap(self, workers: int) -> int:
        """This process's share of ``max_requests`` (0: no cap) when the run has ``workers`` processes."""
        return -(-self.max_requests // max(workers, 1)) if self.max_requests else 0

    def operations(self, doc: str, available: Iterable[str]) -> list[str]:
        """The operation ids of ``doc`` to fuzz, in the document's order."""
        wanted = self.include.get(doc) or []
        return [op for op in available if (wanted == "all" or op in wanted) and op not in self.exclude]

    def hypothesis_settings(self, max_examples: int | None = None, **extra: Any) -> hypothesis.settings:
        """The settings of every property over requests (`payconform.properties`), at this run's budget."""
        return request_settings(self.examples if max_examples is None else max_examples, **extra)


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


# ---------------------------------------------------------------------------------------------
# the session: one per pytest process
# ---------------------------------------------------------------------------------------------


@dataclass
class FuzzSession:
    settings: FuzzSettings
    target: Any  # payconform.target.Target, or None when the run has no target
    contract: _contract.Contract
    pacer: Any
    redactor: Any
    workers: int = 1  # processes of the run sharing the request budget
    requests_sent: int = 0
    implemented: dict[str, bool] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # test nodeid -> its first failure
    _documents: dict[str, dict] = field(default_factory=dict)

    # -- the contract ---------------------------------------------------------------------------

    def document(self, doc: str) -> dict:
        """A contract document, parsed once per process (they are large: the C loader when there is one)."""
        if doc not in self._documents:
            path = self.contract.directory / f"{doc}.openapi.yaml"
            self._documents[doc] = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
        return self._documents[doc]

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
            "request-timeout": float(self.target.request_timeout) if self.target else 10.0,
            "parameters": {
                "path.orgId": (self.target.org_id if self.target else None) or "unset",
                **{path: {"dictionary": names[path], "probability": EXAMPLE_PROBABILITY} for path in examples},
            },
            "generation": {"max-examples": self.settings.examples},
        }
        return schemathesis.Config.from_dict(_contract.deep_merge(self.settings.schemathesis, runtime))

    def schema(self, doc: str, walks: bool = False) -> Any:
        """The contract document ``doc`` as a schemathesis schema for this target (may have no operations);
        for the stateful walks, with request bodies narrowed to the profile's examples (``walk_bodies``)."""
        document = (walk_bodies.narrow(self.document(doc), self._example_body) if walks
                    else copy.deepcopy(self.document(doc)))
        schema = openapi.from_dict(document, config=self.config())
        schema = schema.include(operation_id=self.operations(doc) or ["-none-"])
        session = self

        @schema.auth(refresh_interval=None)
        class PoolKey:
            """A key of the target's pool of equivalent read+write test keys (``before_call`` picks which)."""

            def get(self, case: Any, ctx: Any) -> str | None:
                pool = session.target.pool if session.target else []
                return pool[0] if pool else None

            def set(self, case: Any, data: str | None, ctx: Any) -> None:
                if data:
                    case.headers = {**(case.headers or {}), API_KEY_HEADER: data}

        return schema

    # -- hooks ----------------------------------------------------------------------------------

    def before_call(self, case: Any) -> None:
        """Count against the cap, pin the organization, refresh the idempotency key, pick the key."""
        self.requests_sent += 1
        cap = self.settings.process_cap(self.workers)
        if cap and self.requests_sent > cap:
            pytest.skip(f"fuzz budget used up: this process sent its {cap} requests, its share of "
                        f"--fuzz-max-requests {self.settings.max_requests}")
        if self.target and isinstance(case.path_parameters, dict) and "orgId" in case.path_parameters:
            case.path_parameters["orgId"] = self.target.org_id  # stateful walks ignore the `parameters` setting
        headers = case.headers if case.headers is not None else {}
        key = None
        for name in list(headers):
            value = headers[name]
            if name.lower() == "idempotency-key" and isinstance(value, str) and IDEMPOTENCY_KEY.match(value):
                headers[name] = new_idempotency_key()
            elif name.lower() == API_KEY_HEADER and isinstance(value, str):
                key = value
                if self.target and value in self.target.pool:  # the least used key now, not when the case was made
                    key = headers[name] = self.pacer.least_loaded(self.target.pool)
        if key and key.strip().startswith("svc_live_") and case.method.upper() in WRITE_METHODS:
            raise SafetyError(f"refusing to fuzz {case.method.upper()} {case.operation.path} with a live key")

    def pace(self, case: Any) -> None:
        """Wait for the pacer's go for the request about to be sent: its key's budget and the IP's. A key that
        is not one of the target's (a check's deliberately invalid one) is no credential: only the IP's. The
        operation's path template is enough for the route budgets of the Limits table."""
        key = next((v for k, v in (case.headers or {}).items() if k.lower() == API_KEY_HEADER and isinstance(v, str)),
                   None)
        self.pacer.acquire(key if self.target and key in self.target.pool else None, case.method,
                           case.operation.path)

    def after_call(self, case: Any, response: Any) -> None:
        rec = _results.current()
        if rec is None:
            return
        r = self.redactor
        request = response.request
        body = request.body or b""
        rec.add_exchange({
            "op": operation_id(case.operation),
            "attempt": 1,
            "method": request.method,
            "url": r.redact(request.url),
            "request_headers": r.headers(dict(request.headers)),
            "request_body": r.redact(_truncate(body if isinstance(body, bytes) else str(body).encode())),
            "status": response.status_code,
            "response_headers": r.headers({k: ", ".join(v) for k, v in response.headers.items()}),
            "response_body": r.redact(_truncate(response.content or b"")),
            "request_id": _header(response.headers, "x-request-id"),
            "elapsed": round(float(response.elapsed or 0.0), 4),
        })

    # -- running a case -------------------------------------------------------------------------

    def ensure_implemented(self, operation: Any, anon: Any) -> None:
        """Skip an operation the target does not serve: its own path answers 404 ROUTE_NOT_FOUND.

        The probe carries no credential and no body, so it cannot run anything.
        """
        label = operation.label
        if label not in self.implemented:
            path = re.sub(r"\{(?!orgId\})\w+\}", PROBE_ID, operation.path)
            ex = anon.request(operation.method.upper(), path, credential=None, idempotency_key=None, raw=True)
            body = _json_or_none(ex.content)
            self.implemented[label] = not (ex.status == 404 and isinstance(body, dict)
                                           and body.get("type") == "ROUTE_NOT_FOUND")
        if not self.implemented[label]:
            pytest.skip(f"not implemented by the target: {label} answers 404 ROUTE_NOT_FOUND")

    def send(self, case: Any) -> Any:
        """``case.call()``, resent after ``Retry-After`` on a 429 (the limit may be shared with earlier runs).

        A 429 means the request was refused before the handler ran (Limits), so resending is safe.
        """
        response = case.call()
        for _ in range(MAX_429_RETRIES):
            if response.status_code != 429:
                break
            time.sleep(_retry_after(response))
            response = case.call()
        return response

    def run_case(self, case: Any, anon: Any) -> None:
        """Send one generated case and check the answer; once the test has a failure, send nothing more.

        One failure is enough to fail the operation; not spending the rest of its budget keeps a run against
        a broken target (or a mutant) short.
        """
        if self._nodeid() in self.failures:
            return
        self.ensure_implemented(case.operation, anon)
        self.validate(case, self.send(case))

    def validate(self, case: Any, response: Any) -> None:
        """Run the checks; the first failure is recorded for the test, which fails once its run is over.

        Raising inside Hypothesis would make it replay the failing case, and a replay against a live
        target is not the same request (names already taken, fresh idempotency keys): the report would be a
        Flaky error instead of the failure. So the run goes on and ``take_failure`` hands the failure to
        ``suites/fuzz/conftest.py``.
        """
        try:
            case.validate_response(response)
        except FailureGroup as exc:
            self.failures.setdefault(self._nodeid(), self.describe(case, response, exc))

    def take_failure(self, nodeid: str) -> str | None:
        """The failure a test recorded (None if it recorded none); forgets it."""
        return self.failures.pop(nodeid, None)

    @staticmethod
    def _nodeid() -> str:
        rec = _results.current()
        return rec.nodeid if rec is not None else ""

    def describe(self, case: Any, response: Any, group: FailureGroup) -> str:
        """What failed, against which requirement, what the target answered, a reproduction, the x-request-id."""
        own = self.settings.operation_requirements.get(operation_id(case.operation) or "", [])
        lines = [self.requirement_line(rid) for rid in dict.fromkeys(
            [rid for failure in group.exceptions for rid in self._requirements_of(failure)] + own)]
        for failure in group.exceptions:
            inner = getattr(failure, "exception", None)
            what = inner.what if isinstance(inner, SpecViolation) else _squash(failure.message)
            checks = ", ".join(getattr(failure, "checks", ()) or ())
            title = f"{failure.title} ({checks})" if checks else failure.title
            lines.append(f"what happened: {title}" + (f": {_short(what, MAX_FAILURE_TEXT)}" if what else ""))
        lines.append(f"operation: {case.operation.label} (contract/{self._doc_of(case)}.openapi.yaml)")
        lines.append(f"target answered: {response.status_code} {_short(_squash(response.content.decode('utf-8', 'replace')), 300)}")
        lines.append(f"x-request-id: {_header(response.headers, 'x-request-id') or '(none)'}")
        lines.append(f"fuzz seed: {self.settings.seed} (`payconform run --fuzz-seed {self.settings.seed}` "
                     "generates the same cases)")
        return "\n".join([self.redactor.redact("\n".join(lines)),
                          "reproduce (set PAYCONFORM_API_KEY to a test key; use a fresh Idempotency-Key):",
                          "  " + self.curl(case)])

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
                return session.send(case)

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

    def _requirements_of(self, failure: Any) -> list[str]:
        inner = getattr(failure, "exception", None)
        if isinstance(inner, SpecViolation):
            return [inner.requirement]
        out: list[str] = []
        for check in getattr(failure, "checks", ()) or ():
            out += self.settings.check_requirements.get(check, [])
        return out

    def _doc_of(self, case: Any) -> str:
        op_id = operation_id(case.operation)
        return next((d for d in DOCUMENTS if op_id in operation_ids(self.document(d))), "payouts")

    def requirement_line(self, rid: str) -> str:
        r = self.contract.requirements.get(rid) or {}
        part = self.contract.part_title(r.get("part")) if r.get("part") else ""
        section = str(r.get("section") or "")
        where = section if section.startswith(part) else " > ".join(x for x in (part, section) if x)
        quote = " ".join(str(r.get("quote") or "").split())
        return f"[{rid}] {where}: \"{quote}\"" if quote else f"[{rid}] {where}"

    def curl(self, case: Any) -> str:
        """A curl command a person can paste: the credential is an environment variable, never the key.

        The header is written ``"x-api-key:""$PAYCONFORM_API_KEY"`` (two quoted strings the shell joins) so
        that the report's redaction, which masks whatever follows ``x-api-key:`` up to a quote, leaves it readable.
        """
        command = self.redactor.redact(case.as_curl_command())
        for masked in (f"{API_KEY_HEADER}: [Filtered]", f"{API_KEY_HEADER}: {MASK}"):
            command = command.replace(shlex.quote(masked), f'"{API_KEY_HEADER}:""$PAYCONFORM_API_KEY"')
        return command


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value[0] if isinstance(value, list) and value else (value if isinstance(value, str) else None)
    return None


def _retry_after(response: Any) -> float:
    try:
        return min(max(float(_header(response.headers, "retry-after") or 1), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 1.0


def _json_or_none(content: bytes) -> Any:
    try:
        return json.loads(content) if content else None
    except (ValueError, UnicodeDecodeError):
        return None


def _truncate(data: bytes) -> str:
    text = data[:TRANSCRIPT_BODY].decode("utf-8", errors="replace")
    return text + (f"... [truncated, {len(data)} bytes in all]" if len(data) > TRANSCRIPT_BODY else "")


def _squash(text: str) -> str:
    return " ".join(str(text).split())


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# process-wide session and hooks
# ---------------------------------------------------------------------------------------------

_session: FuzzSession | None = None


def settings_path() -> Path:
    return paths.suites_dir() / "fuzz" / "fuzz.yaml"


def configure(config: pytest.Config) -> FuzzSession:
    """Build this process's session from the payconform plugin's state (called from suites/fuzz/conftest.py)."""
    global _session
    from .plugin import STATE

    state = config.stash[STATE]
    contract = state.contract or _contract.Contract.load()
    settings = FuzzSettings.load(
        settings_path(), (contract.profile or {}).get("fuzz"),
        budget=config.getoption("payconform_fuzz_budget", default=None),
        max_requests=config.getoption("payconform_fuzz_max_requests", default=None),
        seed=config.getoption("payconform_fuzz_seed", default=None),
    )
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
    _session = FuzzSession(settings, state.target, contract, state.pacer, state.redactor, workers=workers)
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


@schemathesis.hook("before_call")
def _before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if _session is not None:
        _session.before_call(case)


@schemathesis.hook("after_call")
def _after_call(context: Any, case: Any, response: Any) -> None:
    if _session is not None:
        _session.after_call(case, response)


def _paced(send: Any) -> Any:
    """Every request schemathesis sends waits for the pacer - also the probes its checks send on their own
    (``ignored_auth``, ``use_after_free``, ...), which no hook sees; unpaced, they would trip the target's
    per-IP ceiling and the 429 would read as a failure."""
    def paced_send(case: Any, **kwargs: Any) -> Any:
        if _session is not None:
            _session.pace(case)
        return send(case, **kwargs)
    return paced_send


REQUESTS_TRANSPORT.send = _paced(REQUESTS_TRANSPORT.send)  # type: ignore[method-assign]

