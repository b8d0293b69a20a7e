"""`payconform run --list | --baseline`, `baseline update` and `report diff` on the fake suite."""

from __future__ import annotations

import json
import re

import jsonschema
import yaml

from .conftest import SCHEMA_PATH, cli

KEEP = ["--", "-k", "not test_fresh_org"]  # the fake suite's operator-org test is for the plugin tests


def test_list_shows_requirements_and_tests_without_running(workdir):
    res = cli(workdir, "run", "--list", "--select", "DEMO-*")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "DEMO-PASS  [endpoints]  GET balance answers the balance." in res.stdout
    assert "    suites/endpoints/test_demo.py::test_balance\n" in res.stdout
    assert "AUTH-CLOCK" not in res.stdout  # the selection is applied
    assert "4 tests checking 2 requirements (of 8 in the contract)" in res.stdout
    assert not (workdir / "reports").exists()  # nothing ran


def test_gate_update_run_and_diff(workdir):
    first = cli(workdir, "run", "--report-dir", "r1", "-n", "0", *KEEP)
    assert first.returncode == 1, first.stdout + first.stderr

    upd = cli(workdir, "baseline", "update", "--from", "r1", "--out", "gate.yaml")
    assert upd.returncode == 0, upd.stderr
    entries = yaml.safe_load((workdir / "gate.yaml").read_text())["expected"]
    assert {(e["test"].split("::")[1], e["expect"]) for e in entries} == {
        ("test_balance_created", "failed"), ("test_signed", "skipped"), ("test_signed_factory", "skipped"),
        ("test_static_skip", "skipped")}
    assert all(e["reason"] and e["requirements"] for e in entries)

    gated = cli(workdir, "run", "--baseline", "gate.yaml", "--report-dir", "r2", "-n", "0", *KEEP)
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "CI gate passed" in gated.stderr
    results = json.loads((workdir / "r2" / "results.json").read_text())
    assert results["gate"]["passed"] is True
    verdicts = {t["nodeid"].split("::")[1]: t["verdict"] for t in results["tests"]}
    assert verdicts["test_balance_created"] == "expected_failure"
    assert ">expected failure</span>" in (workdir / "r2" / "index.html").read_text()

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads((workdir / "r1" / "results.json").read_text()), schema)
    jsonschema.validate(results, schema)
    for path in (p for p in (workdir / "r2").rglob("*") if p.is_file()):  # rewritten files stay redacted
        assert not re.search(r"svc_test_(?!\*)", path.read_text(errors="replace")), path

    diff = cli(workdir, "report", "diff", "r1", "r2")
    assert diff.returncode == 1
    assert "DEMO-FAIL: failed -> expected_failure" in diff.stdout
    assert cli(workdir, "report", "diff", "r2", "r2").returncode == 0

    # a stale entry and a fixed failure both fail the gate
    module = entries[0]["test"].split("::")[0]  # node ids are relative to pytest's rootdir
    entries.append({"test": f"{module}::test_renamed", "requirements": ["DEMO-PASS"], "expect": "failed",
                    "reason": "old"})
    entries.append({"test": f"{module}::test_balance", "requirements": ["DEMO-PASS"], "expect": "failed",
                    "reason": "was broken"})
    (workdir / "gate.yaml").write_text(yaml.safe_dump({"version": 1, "expected": entries}))
    stale = cli(workdir, "run", "--baseline", "gate.yaml", "--report-dir", "r3", "-n", "0", *KEEP)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert f"unmatched_entry: {module}::test_renamed " in stale.stderr
    assert f"expected_failure_passed: {module}::test_balance " in stale.stderr
    assert "CI gate failed" in stale.stderr


def test_a_bad_baseline_stops_before_running(workdir):
    (workdir / "bad.yaml").write_text("expected: [{test: x, expect: failed}]\n")
    res = cli(workdir, "run", "--baseline", "bad.yaml", "--report-dir", "r4", "-n", "0")
    assert res.returncode == 2 and "needs a `reason`" in res.stderr
    assert not (workdir / "r4").exists()


def test_approximate_timing_misses_warn_unless_told_otherwise(workdir):
    reqs = workdir / "contract" / "requirements.yaml"
    reqs.write_text(reqs.read_text().replace("needs: [api_key], testable: true}\n  - {id: AUTH-CLOCK",
                                             "needs: [api_key], testable: true, level: observe}\n  - {id: AUTH-CLOCK"))
    select = ["--select", "DEMO-*", "-n", "0"]
    warn = cli(workdir, "run", "--report-dir", "w1", *select)
    assert warn.returncode == 0, warn.stdout + warn.stderr
    assert "warning: approximate timing missed" in warn.stderr and "test_balance_created" in warn.stderr
    results = json.loads((workdir / "w1" / "results.json").read_text())
    assert {r["id"]: r["verdict"] for r in results["requirements"]}["DEMO-FAIL"] == "warning"
    strict = cli(workdir, "run", "--report-dir", "w2", "--warnings-as-errors", *select)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "error: warning: " in strict.stderr and "CI gate failed" in strict.stderr
    assert "unexpected_skip" not in strict.stderr  # without a baseline, skips are not the gate's business
