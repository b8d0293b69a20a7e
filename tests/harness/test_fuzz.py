"""Unit tests of payconform.fuzz.session: settings, contract-derived fields, preparing and sending cases, failure reports
(a mock target)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NoReturn

import httpx
import hypothesis
import pytest
import yaml
from schemathesis import openapi
from schemathesis.core.failures import CustomFailure
from schemathesis.errors import FailureGroup
from schemathesis.transport.requests import REQUESTS_TRANSPORT, RequestsTransport

from payconform.fuzz import session as fuzz, coverage as fuzz_coverage
from payconform import paths
from payconform.client import SafetyError
from payconform.contract import run_contract
from payconform.pacing.pacer import NoPacer
from payconform.redact import Redactor
from payconform.run import Run
from payconform.transport.sender import Transport
from payconform.transport.schemathesis import HarnessTransport

KEY_A = "svc_test_" + "a" * 32 + "_" + "A" * 43
KEY_B = "svc_test_" + "b" * 32 + "_" + "B" * 43
LIVE = "svc_live_" + "c" * 32 + "_" + "C" * 43
PRODUCTS = "/checkout/organizations/{orgId}/products"


class CountingPacer(NoPacer):
    """Records acquisitions; `least_loaded` answers the last key of the pool."""

    def __init__(self) -> None:
        self.acquired: list[str | None] = []

    def acquire(self, credential: str | None, method: str = "", url: str = "") -> float:
        self.acquired.append(credential)
        return 0.0

    def least_loaded(self, pool: Iterable[str]) -> str:
        return list(pool)[-1]


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump({
        "include_operations": {"payouts": ["getBalance", "createPayout"], "checkout": ["createCheckoutProduct"]},
        "exclude_operations": ["createPayout"],
        "examples_per_operation": 7, "stateful_steps": 3, "max_requests": 2,
        "schemathesis": {"checks": {"unsupported_method": {"enabled": False}},
                         "output": {"sanitization": {"sensitive-markers": ["token", "secret"]}}},
        "check_requirements": {"not_a_server_error": ["ERR-VALIDATION-ERROR"]},
    }))
    return path


@pytest.fixture
def session(settings_file: Path) -> fuzz.FuzzSession:
    target = SimpleNamespace(base_url="http://127.0.0.1:9/business/api/v1", org_id="org1", pool=[KEY_A, KEY_B],
                             request_timeout=5)
    run = Run(target=target, contract=run_contract(), pacer=CountingPacer(), redactor=Redactor([KEY_A, KEY_B, LIVE]))
    return fuzz.FuzzSession(fuzz.FuzzSettings.load(settings_file), run)


def product_case(session: fuzz.FuzzSession, headers: dict, body: dict | None = None) -> Any:
    operation = session.schema("checkout")[PRODUCTS]["POST"]
    return operation.Case(path_parameters={"orgId": "other"}, headers=headers,
                          body=body or {"name": "n", "currency": "USD", "unitAmount": "-1"})


def test_settings_overrides_and_budget(settings_file: Path) -> None:
    s = fuzz.FuzzSettings.load(settings_file, {"include_operations": "all"}, budget=30, max_requests=9)
    assert (s.examples, s.max_requests, s.stateful_steps) == (30, 9, 3)
    assert s.operations("payouts", ["getBalance", "createPayout", "listPayouts"]) == ["getBalance", "listPayouts"]
    narrow = fuzz.FuzzSettings.load(settings_file)
    assert narrow.operations("payouts", ["getBalance", "createPayout", "listPayouts"]) == ["getBalance"]
    assert narrow.operations("checkout", ["createCheckoutProduct", "getCheckoutProduct"]) == ["createCheckoutProduct"]


def test_seed_defaults_to_a_fixed_one_and_reaches_schemathesis(settings_file: Path, session: fuzz.FuzzSession) -> None:
    assert fuzz.FuzzSettings.load(settings_file).seed == fuzz.SEED
    assert session.config().seed == fuzz.SEED
    session.settings = fuzz.FuzzSettings.load(settings_file, seed=7)
    assert session.config().seed == 7


def test_timeout_grows_with_the_budget(settings_file: Path) -> None:
    small, deep = fuzz.FuzzSettings.load(settings_file), fuzz.FuzzSettings.load(settings_file, budget=300)
    assert small.timeout() >= 120 and deep.timeout() > 300 * small.stateful_steps


def test_hypothesis_settings_are_reproducible_and_bounded(settings_file: Path) -> None:
    h = fuzz.FuzzSettings.load(settings_file).hypothesis_settings()
    assert h.derandomize and h.max_examples == 7 and h.database is None
    assert "shrink" not in {p.name for p in h.phases}


def test_money_and_amount_fields_come_from_the_contract(session: fuzz.FuzzSession) -> None:
    assert {"unitAmount", "sourceAmount", "amount"} <= session.money_fields
    assert session.amount_fields("createCheckoutProduct") == {"unitAmount"}
    assert session.amount_fields("getBalance") == frozenset()


def test_profile_examples_become_dictionaries(session: fuzz.FuzzSession) -> None:
    values = session.example_values()
    assert "USD" in values["body.currency"]
    assert all("{" not in v for vs in values.values() for v in vs)


def test_schema_is_narrowed_to_the_fuzzed_operations(session: fuzz.FuzzSession) -> None:
    ops = [r.ok().definition.raw["operationId"] for r in session.schema("payouts").get_all_operations()]
    assert ops == ["getBalance"]


def test_prepare_refreshes_valid_keys_and_rotates_the_pool(session: fuzz.FuzzSession) -> None:
    case = product_case(session, {"x-api-key": KEY_A, "Idempotency-Key": "abc"})
    session.prepare(case)
    assert case.headers["Idempotency-Key"].startswith("pc-") and case.headers["Idempotency-Key"] != "abc"
    assert case.headers["x-api-key"] == KEY_B and session.pacer.acquired == []
    assert case.path_parameters["orgId"] == "org1"
    invalid = product_case(session, {"x-api-key": KEY_A, "Idempotency-Key": "not valid!"})
    session.prepare(invalid)
    assert invalid.headers["Idempotency-Key"] == "not valid!"


def test_prepare_stops_at_the_cap(session: fuzz.FuzzSession) -> None:
    """One test holds the whole budget of 2, whichever worker runs it: no cap per worker skips it earlier."""
    for _ in range(2):
        session.prepare(product_case(session, {}))
    with pytest.raises(fuzz.ShareSpent, match="2 requests"):
        session.prepare(product_case(session, {}))
    session.settings.max_requests = 0  # no cap
    for _ in range(5):
        session.prepare(product_case(session, {}))


def test_a_test_stops_at_its_share_of_the_phase(session: fuzz.FuzzSession) -> None:
    session.settings.max_requests, session.settings.phase_tests = 4, 2  # two tests: two requests each
    for _ in range(2):
        session.prepare(product_case(session, {}))
    with pytest.raises(fuzz.ShareSpent, match="2 requests"):
        session.prepare(product_case(session, {}))
    assert session.sent_by_test == {session._nodeid(): 2}


def test_the_shares_add_up_to_the_budget_property_tests_first(session: fuzz.FuzzSession) -> None:
    """100 requests over 6 property tests and 70 sweeps: one each, the 24 left to the property tests."""
    properties, sweeps = [f"p{i}" for i in range(6)], [f"s{i}" for i in range(70)]
    session.settings.max_requests = 100
    session.settings.split(properties, sweeps)
    assert sum(session.settings.shares.values()) == 100
    assert {session.settings.operation_cap(p) for p in properties} == {5}
    assert {session.settings.operation_cap(s) for s in sweeps} == {1}
    session.settings.split([], ["a", "b", "c"])  # 100 over three sweeps: 34, 33, 33
    assert [session.settings.operation_cap(n) for n in "abc"] == [34, 33, 33]
    session.settings.max_requests = 0  # no cap
    session.settings.split(properties, sweeps)
    assert session.settings.operation_cap("p0") == 0


def test_only_a_case_answered_route_not_found_costs_a_probe(session: fuzz.FuzzSession) -> None:
    """A served route answers its cases with anything but 404 ROUTE_NOT_FOUND: no probe; a case answered
    ROUTE_NOT_FOUND is probed on the operation's own path, and skipped when that answers the same."""
    probes: list[str] = []
    answers = iter([404, 401])

    def request(method: str, path: str, **kw: Any) -> Any:
        probes.append(path)
        status = next(answers)
        body = b'{"type":"ROUTE_NOT_FOUND"}' if status == 404 else b'{"type":"UNAUTHORIZED"}'
        return SimpleNamespace(status=status, headers={}, content=body)

    anon = SimpleNamespace(request=request)
    case = product_case(session, {})
    not_found = SimpleNamespace(status_code=404, headers={}, content=b'{"type":"ROUTE_NOT_FOUND"}')
    session.ensure_implemented(case.operation, anon, SimpleNamespace(status_code=400, headers={}, content=b"{}"))
    assert probes == [] and session.implemented[case.operation.label] is True
    session.implemented.clear()
    with pytest.raises(pytest.skip.Exception, match="not implemented"):
        session.ensure_implemented(case.operation, anon, not_found)
    session.implemented.clear()
    session.ensure_implemented(case.operation, anon, not_found)  # the path answers 401: served
    assert len(probes) == 2 and session.implemented[case.operation.label] is True


def test_a_property_test_stops_at_its_share(session: fuzz.FuzzSession) -> None:
    session.settings.max_requests, session.settings.shares = 2, {"": 2}
    for _ in range(2):
        session.spend()
        session.sent_by_test[""] = session.sent_by_test.get("", 0) + 1
    with pytest.raises(fuzz.ShareSpent, match="2 requests"):
        session.spend()
    assert session.started == {"": 2}


@pytest.fixture
def wire(session: fuzz.FuzzSession) -> list[httpx.Request]:
    """What the session's transport sends, answered 201 by a mock target."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(201, json={"id": "p1"}, headers={"x-request-id": "req_1"})

    session.transport = Transport(session.target, run=session.run, http=httpx.MockTransport(answer))
    return sent


def test_cases_and_check_probes_go_through_the_harness_transport(session: fuzz.FuzzSession,
                                                                 wire: list[httpx.Request]) -> None:
    """Also the probes checks send without hooks (``schema.transport``): paced, guarded, recorded; nothing global
    is replaced."""
    case = product_case(session, {"x-api-key": KEY_A, "Idempotency-Key": "abc"})
    response = session.call(case)
    assert response.status_code == 201 and response.headers["x-request-id"] == ["req_1"]
    assert wire[0].headers["x-api-key"] == KEY_B and wire[0].url.path.endswith("/checkout/organizations/org1/products")
    probe = product_case(session, {"x-api-key": "SCHEMATHESIS-INVALID-KEY"})
    assert isinstance(probe.operation.schema.transport, HarnessTransport)
    probe.operation.schema.transport.send(probe)
    assert session.pacer.acquired == [KEY_B, None]  # a made-up key spends the IP budget only
    assert REQUESTS_TRANSPORT.send.__func__ is RequestsTransport.send


def test_live_key_writes_are_refused_before_sending(session: fuzz.FuzzSession, wire: list[httpx.Request]) -> None:
    with pytest.raises(SafetyError):
        session.call(product_case(session, {"x-api-key": LIVE}))
    assert wire == []


def test_failure_report_names_requirement_reproduction_and_request_id(session: fuzz.FuzzSession) -> None:
    case = product_case(session, {"x-api-key": KEY_A, "Idempotency-Key": "k1"})
    violation = fuzz.SpecViolation("ERR-BAD-REQUEST", "a non-positive amount was accepted")
    group = FailureGroup([CustomFailure(operation=case.operation.label, title="payconform_x", message=str(violation),
                                        exception=violation)])
    response = SimpleNamespace(status_code=201, content=b'{"id":"p1"}', headers={"x-request-id": ["req_1"]})
    text = session.describe(case, response, group)
    assert text.startswith("[ERR-BAD-REQUEST] ")
    assert "a non-positive amount was accepted" in text and "x-request-id: req_1" in text
    assert '"x-api-key:""$PAYCONFORM_API_KEY"' in text and "curl -X POST" in text
    assert Redactor().redact(text) == text  # the report's redaction leaves the reproduction pasteable
    assert KEY_A not in text
    assert "Idempotency-Key: k1" in text
    assert f"fuzz seed: {fuzz.SEED} (`payconform run --fuzz-seed {fuzz.SEED}`" in text


def test_first_failure_is_kept_and_nothing_more_is_sent(session: fuzz.FuzzSession,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    case = product_case(session, {"x-api-key": KEY_A})
    violation = fuzz.SpecViolation("ERRBODY-SHAPE", "bad")
    group = FailureGroup([CustomFailure(operation="op", title="payconform_x", message="bad", exception=violation)])

    def fail(*args: object, **kwargs: object) -> NoReturn:
        raise group

    monkeypatch.setattr(type(case), "validate_response", fail)
    session.validate(case, SimpleNamespace(status_code=400, content=b"{}", headers={}))
    session.run_case(case, anon=None)  # would need a probe and a request: returns before either
    text = session.take_failure("")
    assert text.startswith("[ERRBODY-SHAPE] ") and "what happened: payconform_x: bad" in text
    assert session.take_failure("") is None


def test_fuzz_yaml_names_only_known_requirements() -> None:
    from suites.fuzz.checks import REQUIREMENTS

    known = run_contract().requirements
    data = yaml.safe_load((paths.suites_dir() / "fuzz" / "fuzz.yaml").read_text())
    named = set(REQUIREMENTS)
    for ids in [*data["check_requirements"].values(), *data["operation_requirements"].values()]:
        named.update(ids)
    assert named and not named - set(known), f"unknown requirement ids: {sorted(named - set(known))}"
    for doc, ops in data["include_operations"].items():
        document = yaml.safe_load((paths.contract_dir() / f"{doc}.openapi.yaml").read_text())
        assert set(ops) <= set(fuzz.operation_ids(document)), f"{doc}: unknown operation ids"


def test_loads_the_shipped_settings() -> None:
    s = fuzz.FuzzSettings.load(fuzz.settings_path())
    assert s.examples >= 1 and s.max_requests >= 1
    assert openapi.from_path(paths.contract_dir() / "payouts.openapi.yaml") is not None


def test_walks_start_afresh_when_hypothesis_sees_the_target_change_a_walk(session: fuzz.FuzzSession) -> None:
    """A walk's links depend on the target's answers; Hypothesis' FlakyStrategyDefinition then is no verdict."""
    runs: list[int] = []

    class Machine:
        @classmethod
        def run(cls, settings: Any) -> None:
            runs.append(settings.max_examples)
            if len(runs) < 3:
                raise hypothesis.errors.FlakyStrategyDefinition("the target answered differently")

    session.run_stateful(SimpleNamespace(as_state_machine=lambda: Machine))
    assert runs == [7, 7, 7]

    runs.clear()

    class AlwaysFlaky(Machine):
        @classmethod
        def run(cls, settings: Any) -> None:
            runs.append(settings.max_examples)
            raise hypothesis.errors.FlakyStrategyDefinition("again")

    session.run_stateful(SimpleNamespace(as_state_machine=lambda: AlwaysFlaky))
    assert len(runs) == fuzz.MAX_WALK_RESTARTS + 1


def _built(session: fuzz.FuzzSession, attach_later: bool) -> list[str]:
    """The explicit cases (contract examples, then coverage) schemathesis attaches to the createCheckoutProduct
    test, built at once or deferred and attached as the test starts."""
    from schemathesis.generation.feedback import FeedbackSources
    from schemathesis.pytest._test_builder import build_operation_test

    schema = session.schema("checkout")
    operation = schema[PRODUCTS]["POST"]

    def test(case: Any) -> None:
        pass

    def build() -> Any:
        return build_operation_test(config=schema.config, operation=operation, test_func=test, given_kwargs={},
                                    feedback=FeedbackSources())

    if attach_later:
        with fuzz_coverage.deferred():
            built = build()
        before = len(getattr(built, "hypothesis_explicit_examples", []))
        fuzz_coverage.attach(built)
        fuzz_coverage.attach(built)  # once only
        assert len(built.hypothesis_explicit_examples) > before, "no coverage case was attached"
    else:
        built = build()
    return [repr((c.method, c.path_parameters, c.query, c.body, sorted((c.headers or {}).items())))
            for c in (e.kwargs["case"] for e in built.hypothesis_explicit_examples)]


def test_coverage_cases_built_as_the_test_starts_are_those_collection_would_build(
        session: fuzz.FuzzSession) -> None:
    """Deferring the coverage build from collection to the test (``fuzz_coverage``) changes nothing the phase
    sends: the same explicit cases in the same order."""
    eager = _built(session, attach_later=False)
    assert len(eager) > 10
    assert _built(session, attach_later=True) == eager
    assert fuzz_coverage.builder.add_coverage.__name__ == "add_coverage", "the builder was not restored"
