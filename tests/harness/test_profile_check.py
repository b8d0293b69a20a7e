"""``payconform profile check | suggest`` against the embedded reference: it matches within 20 requests, a
wrong profile entry is a difference naming it, and the suggested block fixes what the target showed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from payconform.cli import main
from payconform.contract import Contract, deep_merge
from payconform.profile.check import check
from payconform.profile.probe import MAX_REQUESTS
from payconform.provision import provision_reference
from payconform.refserver import RefServer
from payconform.target import Target
from tests.harness.wire import Counting

QUOTE_PATH = "/payments/organizations/{orgId}/payouts/quote"
# Entries the reference does not answer as: each fixable from what the API shows.
WRONG_VALUES = {"sandbox": {"approval": {"threshold": "25000.00"}, "pricing": {"corridor_key": "destinationCurrency"}},
                "operations": {"listCorridors": {"page": {"items": "corridors"}}}}



@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Iterator[tuple[Target, Path]]:
    with RefServer() as ref:
        target = provision_reference(ref)
        yield target, target.dump(tmp_path_factory.mktemp("profile") / "target.yaml")


def _with_profile(target: Target, path: Path, profile: dict) -> Path:
    other = copy.deepcopy(target)
    other.profile = profile
    return other.dump(path)


def test_check_says_matches_for_the_reference_within_20_requests(reference, capsys):
    target, path = reference
    counting = Counting()
    report = check(target, Contract.load().profile, http=counting)
    assert report.fatal is None and not report.differences, [f.line() for f in report.differences]
    assert len(counting.sent) <= MAX_REQUESTS == 20
    assert report.requests == len(counting.sent)
    assert all(not s.startswith(("DELETE", "PUT")) for s in counting.sent)

    assert main(["profile", "check", "--target", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"payconform: the profile matches {target.base_url}" in out
    assert "matches: sandbox.approval.threshold: the policy shows 5000.00 at `approvals.threshold`" in out


def test_a_wrong_profile_path_is_a_difference_naming_the_entry(reference, tmp_path, capsys):
    target, _ = reference
    wrong = _with_profile(target, tmp_path / "target.yaml", {"operations": {"pricePayout": {"path": QUOTE_PATH}}})
    assert main(["profile", "check", "--target", str(wrong)]) == 1
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "operations.pricePayout.path" in ln)
    assert line.startswith("profile check: differs: operations.pricePayout.path: POST " + QUOTE_PATH)
    assert "404 ROUTE_NOT_FOUND" in line and "x-request-id req_" in line
    assert "1 difference(s)" in out


def test_suggest_prints_a_block_that_fixes_the_differences(reference, tmp_path, capsys):
    target, _ = reference
    wrong = _with_profile(target, tmp_path / "wrong.yaml", WRONG_VALUES)
    assert main(["profile", "check", "--target", str(wrong)]) == 1
    out = capsys.readouterr().out
    for entry in ("sandbox.approval.threshold", "sandbox.pricing.corridor_key", "operations.listCorridors.page.items"):
        assert f"differs: {entry}:" in out
    assert "the policy shows 5000.00 at `approvals.threshold` (the profile says 25000.00)" in out

    assert main(["profile", "suggest", "--target", str(wrong)]) == 0
    text = capsys.readouterr().out
    block = yaml.safe_load(text)
    assert block["sandbox"]["approval"]["threshold"] == "5000.00"
    assert block["sandbox"]["pricing"]["corridor_key"] == "currency"
    assert block["operations"]["listCorridors"]["page"]["items"] == "data"
    assert "#   sandbox.payout_scenarios.select_by: " in text  # named, not determined

    merged = deep_merge(Contract.load().profile, block)
    assert not check(target, merged).differences
    fixed = _with_profile(target, tmp_path / "fixed.yaml", block)
    assert main(["profile", "check", "--target", str(fixed)]) == 0
    assert "the profile matches" in capsys.readouterr().out


def _results(path: Path, mismatches: list[dict]) -> Path:
    path.write_text(json.dumps({"profile_mismatches": mismatches}), encoding="utf-8")
    return path


def test_suggest_adds_what_a_runs_mismatches_found(reference, tmp_path, capsys):
    """`--results`: the overrides a run's mismatches named join the block (a later run's over an earlier one's),
    and leave the list of what could not be determined; a mismatch that could not tell its value stays there."""
    _, path = reference
    first = _results(tmp_path / "first.json", [
        {"entry": "sandbox.payout_scenarios.select_by", "seen": "one selected by amount reached it",
         "override": {"sandbox": {"payout_scenarios": {"select_by": "account_suffix"}}}},
        {"entry": "operations.fundSandbox.path", "seen": "no route", "override": None}])
    (tmp_path / "second").mkdir()
    _results(tmp_path / "second" / "results.json", [
        {"entry": "sandbox.payout_scenarios.select_by", "seen": "one selected by amount reached it",
         "override": {"sandbox": {"payout_scenarios": {"select_by": "amount_minor_suffix"}}}},
        {"entry": "sandbox.payout_scenarios.timeline.processing_seconds", "seen": "about 3 s",
         "override": {"sandbox": {"payout_scenarios": {"timeline": {"processing_seconds": 3.0}}}}}])
    assert main(["profile", "suggest", "--target", str(path), "--results", str(first),
                 "--results", str(tmp_path / "second")]) == 0
    text = capsys.readouterr().out
    scenarios = yaml.safe_load(text)["sandbox"]["payout_scenarios"]
    assert scenarios == {"select_by": "amount_minor_suffix", "timeline": {"processing_seconds": 3.0}}
    assert "#   sandbox.payout_scenarios.select_by: " not in text
    assert "#   sandbox.payout_scenarios.timeline.processing_seconds: " not in text
    assert "#   operations.fundSandbox.path: no route; the run met it" in text

    assert main(["profile", "suggest", "--target", str(path), "--results", str(tmp_path / "none.json")]) == 2
    assert "none.json: cannot read a run's results.json" in capsys.readouterr().err


def test_a_target_that_does_not_answer_is_exit_code_2(tmp_path, capsys):
    path = tmp_path / "dead.yaml"
    path.write_text(yaml.safe_dump({"base_url": "http://127.0.0.1:9/business/api/v1", "org_id": "abc",
                                    "credentials": {"api_key": "svc_test_dead"}}), encoding="utf-8")
    assert main(["profile", "check", "--target", str(path)]) == 2
    assert main(["profile", "suggest", "--target", str(path)]) == 2
    assert "does not answer" in capsys.readouterr().err


EXAMPLE = Path(__file__).resolve().parents[2] / "contract" / "examples" / "other-choices.profile.yaml"


@pytest.fixture(scope="module")
def other_choices(tmp_path_factory) -> Iterator[tuple[Target, Path]]:
    with RefServer(extra_args=["--choices", "other"]) as ref:
        target = provision_reference(ref)
        yield target, target.dump(tmp_path_factory.mktemp("other") / "target.yaml")


def test_check_lists_the_differences_of_the_other_configuration(other_choices, capsys):
    target, path = other_choices
    assert main(["profile", "check", "--target", str(path)]) == 1
    out = capsys.readouterr().out
    assert "differs: sandbox.approval.threshold: the policy shows 25000.00 at `approvals.threshold`" in out
    assert "differs: operations.pricePayout.path: POST /payments/organizations/{orgId}/payouts/price answered " \
           "404 ROUTE_NOT_FOUND" in out
    assert "differs: operations.listPaymentReasons.page.items: the answer has no `data` array" in out
    assert "profile check: 20 request(s)" in out


def test_suggest_with_the_served_document_reproduces_the_example_profile(other_choices, capsys):
    target, path = other_choices
    assert main(["profile", "suggest", "--target", str(path), "--openapi", f"{target.root_url}/openapi.json"]) == 0
    text = capsys.readouterr().out
    default = Contract.load().profile
    ours, theirs = deep_merge(default, yaml.safe_load(text)), deep_merge(default, yaml.safe_load(EXAMPLE.read_text()))
    for op_id in yaml.safe_load(EXAMPLE.read_text())["operations"]:
        for key in ("method", "path", "page"):
            assert ours["operations"][op_id].get(key) == theirs["operations"][op_id].get(key), (op_id, key)
    # the recipient's payment method travels under the deployment's name
    assert ours["operations"]["createBeneficiary"]["body_fields"] == {"paymentMethod": "payoutMethod"}
    assert theirs["operations"]["createBeneficiary"]["body_fields"] == {"paymentMethod": "payoutMethod"}
    for entry in (("approval", "threshold"), ("pricing", "corridor_key")):
        assert ours["sandbox"][entry[0]][entry[1]] == theirs["sandbox"][entry[0]][entry[1]]
    # what the API does not show is named, not guessed
    assert "#   sandbox.payout_scenarios.select_by: " in text
    assert "#   sandbox.payout_scenarios.timeline.processing_seconds: " in text

    fitted = _with_profile(target, path.with_name("fitted.yaml"), yaml.safe_load(text))
    assert main(["profile", "check", "--target", str(fitted)]) == 0
    assert "the profile matches" in capsys.readouterr().out


def test_check_reads_the_document_it_is_given(reference, tmp_path, capsys):
    """`payconform check --openapi`: a document it cannot read ends the check (exit 2, naming it) before any
    request; one it can read is mapped, and the preflight goes on."""
    _, path = reference
    assert main(["check", "--target", str(path), "--openapi", str(tmp_path / "none.json")]) == 2
    assert "none.json: cannot read it" in capsys.readouterr().err
    document = Path(__file__).resolve().parents[2] / "contract" / "payouts.openapi.yaml"
    assert main(["check", "--target", str(path), "--openapi", str(document)]) == 0
    assert "can be tested" in capsys.readouterr().out
