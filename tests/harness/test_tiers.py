"""Tiers (``--tier smoke|full|deep``), ``--no-fuzz``, ``--select`` with the fuzz phase, the fuzz phase's budget,
baselines and diffs per tier - on the fake suite project (collection only) and on results data."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from payconform.results import baseline
from payconform.pacing import cost, tiers
from payconform import paths
from payconform.cli.parser import build_parser
from payconform.cli.reports import _common
from payconform.contract import Contract
from payconform.fuzz.session import settings_path
from payconform.fuzz.settings import FuzzSettings

from .fake_project import write_project

pytest_plugins = ["pytester"]

TIERED = '''
import pytest

@pytest.mark.smoke
@pytest.mark.req("CONV-UNTESTED")
def test_money_smoke():
    pass

@pytest.mark.req("CONV-UNTESTED")
def test_money_more():
    pass
'''

SWEEP = '''
import pytest

@pytest.mark.sweep
@pytest.mark.req("CONV-UNTESTED", "DEMO-PASS")
def test_sweep():
    pass

@pytest.mark.req("CONV-UNTESTED")
def test_property():
    pass
'''


@pytest.fixture
def project(pytester, monkeypatch):
    write_project(pytester.path)
    for folder, text in (("conventions", TIERED), ("fuzz", SWEEP)):
        (pytester.path / "suites" / folder).mkdir()
        (pytester.path / "suites" / folder / f"test_{folder}.py").write_text(textwrap.dedent(text))
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    return pytester


def collected(pytester, *args: str) -> set[str]:
    """The test names a run with ``args`` keeps (collection only)."""
    res = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:randomly", "suites", "--collect-only",
                                        "-q", *args)
    assert res.ret in (0, 5), res.stdout.str()
    return {line.split("::")[-1] for line in res.stdout.lines if "::" in line}


def test_cli_options():
    ns = build_parser().parse_args(["run", "--tier", "smoke", "--no-fuzz"])
    assert (ns.tier, ns.fuzz_budget) == ("smoke", 0)
    ns = build_parser().parse_args(["run"])
    assert (ns.tier, ns.fuzz_budget) == (None, None)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--tier", "huge"])


def test_tier_and_selection(project):
    everything = collected(project)
    assert {"test_money_smoke", "test_money_more", "test_sweep", "test_property", "test_balance"} <= everything
    assert collected(project, "--tier", "full") == everything == collected(project, "--payconform-no-fuzz")
    assert collected(project, "--payconform-tier", "smoke") == {"test_money_smoke"}
    # a part selects a sweep by its own folder only, never by the parts of the requirements it checks
    assert collected(project, "--select", "conventions") == {"test_money_smoke", "test_money_more", "test_property",
                                                             "test_static_skip"}
    assert "test_sweep" in collected(project, "--select", "fuzz")
    assert "test_sweep" in collected(project, "--select", "CONV-UNTESTED")
    assert collected(project, "--select", "test_sweep") == {"test_sweep"}
    assert collected(project, "--select", "conventions", "--tier", "smoke") == {"test_money_smoke"}


def test_smoke_and_a_pool_get_more_workers():
    """The smoke tier's tests, and a run without an operator, wait on the spec's clocks in real time: more
    workers, as a key pool gets; the smoke tier without an operator, most of all."""
    from types import SimpleNamespace

    from payconform.options import DEFAULT_WORKERS, POOL_WORKERS, REAL_TIME_SMOKE_WORKERS
    from payconform.cli.run import default_workers

    operator = {"adapter": "reference", "url": "http://127.0.0.1:9/_operator"}
    one_key = SimpleNamespace(pool=[], rate_limit=100, ip_rate_limit=2000, operator_config=operator)
    pool = SimpleNamespace(pool=["k1", "k2"], rate_limit=100, ip_rate_limit=2000, operator_config=operator)
    real_time = SimpleNamespace(pool=[], rate_limit=100, ip_rate_limit=2000, operator_config={"adapter": "none"})
    assert default_workers(one_key) == default_workers(one_key, "full") == DEFAULT_WORKERS != POOL_WORKERS
    assert default_workers(one_key, "smoke") == default_workers(pool) == POOL_WORKERS
    assert default_workers(real_time) == default_workers(real_time, "full") == POOL_WORKERS
    assert default_workers(real_time, "smoke") == REAL_TIME_SMOKE_WORKERS
    assert int(REAL_TIME_SMOKE_WORKERS) > int(POOL_WORKERS)


def test_tiers():
    assert tiers.tier(None).name == "full" and tiers.tier("deep").run_slow
    assert tiers.tier("smoke").marker == tiers.SMOKE_MARKER and tiers.tier("smoke").request_budget <= 300
    with pytest.raises(ValueError, match="smoke, full, deep"):
        tiers.tier("huge")
    assert cost.estimate(300, 1, 100, 2000) == 180
    assert cost.estimate(3000, 100, 100, 2000) == 90  # the per-IP limit binds


def test_fuzz_budget_comes_from_the_tier_and_the_keys():
    one_key, pool = tiers.ONE_KEY, tiers.Pace(keys=12)
    full = FuzzSettings.load(settings_path(), tier=tiers.tier("full"))
    pooled = FuzzSettings.load(settings_path(), tier=tiers.tier("full"), pace=pool)
    deep = FuzzSettings.load(settings_path(), tier=tiers.tier("deep"), pace=pool)
    # one key: what the 1,500 requests leave after the suites
    assert full.max_requests == max(tiers.FUZZ_MINIMUM,
                                    tiers.tier("full").budget(one_key) - tiers.tier("full").suite_requests)
    assert tiers.tier("full").budget(one_key) <= 1500 and full.max_requests < pooled.max_requests
    # a pool: what the binding limit (12 keys x 100/min) leaves of the tier's 100 s after the suites
    assert pooled.max_requests == 1200 * 100 // 60 - tiers.tier("full").suite_requests < deep.max_requests
    # per-IP ceiling binds
    assert tiers.tier("full").fuzz_budget(tiers.Pace(keys=50)) == 2000 * 100 // 60 - tiers.tier("full").suite_requests
    assert tiers.tier("deep").fuzz_budget(pool) == tiers.tier("deep").fuzz_requests
    assert tiers.tier("full").budget(tiers.Pace(keys=100)) == 1500 * 20  # the per-IP ceiling binds
    assert tiers.tier("full").planned(pool) == tiers.tier("full").suite_requests + pooled.max_requests
    assert tiers.Tier("tiny", 100, 60, 99, 50, None, False, None).fuzz_budget() == tiers.FUZZ_MINIMUM
    assert deep.examples > full.examples
    assert FuzzSettings.load(settings_path(), max_requests=7, tier=tiers.tier("deep")).max_requests == 7
    assert FuzzSettings.load(settings_path(), budget=0, tier=tiers.tier("full")).examples == 0
    full.phase_tests = 10
    assert full.operation_cap() == -(-full.max_requests // 10)
    full.max_requests = 0
    assert full.operation_cap() == 0


def _results(tier: str | None, rows: dict[str, str]) -> dict:
    run = {"tier": tier} if tier else {}
    return {"run": run, "tests": [{"nodeid": n, "verdict": v, "outcome": v, "requirements": ["DEMO-PASS"]}
                                  for n, v in rows.items()],
            "requirements": [{"id": "DEMO-PASS", "verdict": "failed" if "failed" in rows.values() else "passed"}]}


def test_baseline_records_its_tier(tmp_path: Path):
    full = _results("full", {"suites/a.py::test_a": "failed", "suites/b.py::test_b": "failed"})
    path = baseline.dump(baseline.entries_from_results(full), tmp_path / "b.yaml", tier=baseline.run_tier(full))
    assert baseline.load_tier(path) == "full" and baseline.run_tier({"run": {}}) == "full"
    entries = baseline.load(path)
    contract = Contract(requirements={"DEMO-PASS": {"id": "DEMO-PASS", "part": "endpoints"}})
    smoke = _results("smoke", {"suites/a.py::test_a": "failed"})
    # the same tier: the entry for test_b, which did not run, is stale
    kinds = [f.kind for f in baseline.check(copy.deepcopy({**smoke, "run": {"tier": "full"}}), entries, contract,
                                            tier="full")]
    assert kinds == ["unmatched_entry"]
    findings = baseline.check(copy.deepcopy(smoke), entries, contract, tier="full")
    assert [(f.kind, f.severity) for f in findings] == [("tier_mismatch", "warning")]


def test_diff_of_two_tiers_compares_what_both_ran():
    full = _results("full", {"suites/a.py::test_a": "passed", "suites/b.py::test_b": "failed"})
    smoke = _results("smoke", {"suites/a.py::test_a": "passed"})
    narrowed = _common(full, smoke)
    assert [t["nodeid"] for t in narrowed["tests"]] == ["suites/a.py::test_a"]
    assert [(r["id"], r["verdict"]) for r in narrowed["requirements"]] == [("DEMO-PASS", "passed")]


TIER_PLUGIN = '''
import json, os
from payconform.plugin import is_suite_path, requirement_ids
from payconform.plugin.markers import in_tier

def pytest_collection_finish(session):
    rows = [{"nodeid": i.nodeid, "requirements": requirement_ids(i), "smoke": in_tier(i, "smoke")}
            for i in session.items if is_suite_path(i.path, session.config)]
    with open(os.environ["TIER_OUT"], "w") as fh:
        json.dump(rows, fh)
'''


def test_smoke_touches_every_part_and_every_catalog_row(tmp_path: Path):
    """The smoke tier names every part and every row of every catalog table that any test of the suite
    checks (a row no test checks - not testable, or not observable - has nothing to run)."""
    (tmp_path / "tier_rows.py").write_text(TIER_PLUGIN)
    out = tmp_path / "rows.json"
    env = {**os.environ, "TIER_OUT": str(out), "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run([sys.executable, "-m", "pytest", str(paths.suites_dir()), "-p", "payconform.plugin",
                           "-p", "tier_rows", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads(out.read_text())
    smoke = [r for r in rows if r["smoke"]]
    assert smoke and len(smoke) < len(rows) / 3
    contract = Contract.load()
    folders = {r["nodeid"].split("/")[1] for r in smoke}
    assert set(contract.part_order()) - folders == set(), "parts without a smoke test"
    checked = {rid for r in rows for rid in r["requirements"]}
    touched = {rid for r in smoke for rid in r["requirements"]}
    missing = {table: [rid for rid in ids if rid in checked and rid not in touched]
               for table, ids in contract.table_rows().items()}
    assert not any(missing.values()), f"catalog rows no smoke test names: {missing}"
    assert all(r["requirements"] for r in smoke)


def test_the_header_of_a_selection_gives_the_whole_tier_as_an_upper_bound() -> None:
    """A selection runs part of a tier: the header must not promise it the tier's requests and minutes."""
    from types import SimpleNamespace

    from payconform.plugin.summary import _tier_line

    config = SimpleNamespace(getoption=lambda name, default=None: 0 if name == "payconform_fuzz_budget" else default)
    target = SimpleNamespace(pool=[], rate_limit=100, ip_rate_limit=2000)
    state = SimpleNamespace(tier=tiers.tier("full"), target=target, config=config, select=[])
    planned = tiers.tier("full").suite_requests  # no fuzz phase
    whole = _tier_line(state)
    assert f"; planned about {planned} requests" in whole and "selected" not in whole
    state.select = ["RATE-*", "events"]
    part = _tier_line(state)
    assert f"selected: RATE-*, events, a part of the tier: the whole tier plans about {planned} requests" in part
