"""results.json follows its documented schema (payconform/schemas/results.schema.json)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from payconform.results import baseline
from payconform.results.verdicts import REQUIREMENT_VERDICTS, TEST_VERDICTS

from .conftest import CONTRACT, SCHEMA_PATH, synthetic_cost


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_a_run_with_every_verdict_is_valid(validator, results):
    validator.validate(results)
    assert {t["verdict"] for t in results["tests"]} == {"passed", "failed", "warning", "needs_operator"}


def test_a_gated_run_is_valid(validator, results):
    entries = [baseline.Entry("suites/errors/test_replay.py::test_replay_conflict", "failed", "ticket 12", ["ERR-B"]),
               baseline.Entry("suites/gone.py::test_gone", "skipped", "old", [])]
    gated = baseline.apply(results, entries, CONTRACT, "b.yaml")
    validator.validate(gated)
    assert {f["kind"] for f in gated["gate"]["findings"]} == {"unexpected_skip", "unmatched_entry", "warning"}


def test_the_schema_names_every_verdict_the_code_produces(validator):
    defs = validator.schema["$defs"]
    assert set(defs["test_verdict"]["enum"]) == set(TEST_VERDICTS)
    assert set(defs["requirement_verdict"]["enum"]) == set(REQUIREMENT_VERDICTS)


def test_an_invalid_row_is_refused(validator, results):
    results["tests"][0]["verdict"] = "sort of passed"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(results)


def test_a_run_with_its_cost_is_valid(validator, results):
    results["cost"] = synthetic_cost()
    results["tests"][0]["requests"] = 17
    validator.validate(results)
    del results["cost"]["floor_seconds"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(results)


def test_a_cost_never_names_a_negative_count(validator, results):
    results["cost"] = synthetic_cost()
    results["cost"]["by_credential"]["api_key"] = -1
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(results)
