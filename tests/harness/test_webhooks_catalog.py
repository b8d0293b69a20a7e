"""contract/catalog/events.yaml: the 22 event types of the spec's table, each with its requirement."""

from __future__ import annotations

from payconform.contract import run_contract


def _catalog() -> dict:
    return run_contract().events


def test_twenty_two_types_each_with_a_known_requirement() -> None:
    catalog = _catalog()
    ids = set(run_contract().requirements)
    types = [t["type"] for t in catalog["types"]]
    assert len(types) == len(set(types)) == 22
    assert all(t["req"] in ids for t in catalog["types"])
    assert all(t["data"] in ("shown", "not_shown") for t in catalog["types"])
    assert {t["type"] for t in catalog["types"] if t["opt_in"]} == {t for t in types if t.startswith("checkout_payment.")}


def test_the_reference_schedule_is_one_of_the_two() -> None:
    catalog = _catalog()
    assert catalog["reference_follows"] in catalog["retry_schedules"]
    assert catalog["reference_why"]
