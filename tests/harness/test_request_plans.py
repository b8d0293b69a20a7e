"""What a run plans to spend on the checks that take many requests (the `many_requests` need): on one
key, not deep, the clamp of 100 on a link's payments is left to the deep tier and the crowded link gets the 21
payments the default page needs, and the payout walks are read once a step; with a key pool or `--run-slow`
the link gets 101 payments and the repeated-reads walks three reads a step. Read from the suites' own
collection (`suites/conftest.py`), against target files whose base URL nothing listens on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from payconform import paths

PLAN_PLUGIN = '''
import json, os
import pytest
from payconform.plugin.markers import requirement_ids
from suites._support import machines, payments

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    breadth = {i.nodeid: {"reqs": requirement_ids(i),
                          "skip": [m.kwargs.get("reason", "") for m in i.iter_markers("skip")]}
               for i in session.items if i.get_closest_marker("breadth")}
    with open(os.environ["PLAN_OUT"], "w") as fh:
        json.dump({"crowds": payments.CROWDS, "walks": machines.PLAN, "most_reads": machines.MOST_READS[0],
                   "breadth": breadth}, fh)
'''
KEY, KEY2 = "svc_test_" + "a" * 32 + "_" + "b" * 43, "svc_test_" + "c" * 32 + "_" + "d" * 43


def _plans(tmp_path: Path, credentials: dict, *args: str, **fields: object) -> dict:
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"base_url": "http://127.0.0.1:9/business/api/v1", "org_id": "ckorg1",
                                  "credentials": credentials, **fields}))
    (tmp_path / "plan_dump.py").write_text(PLAN_PLUGIN)
    out = tmp_path / "plans.json"
    root = paths.suites_dir().parent
    env = {**os.environ, "PLAN_OUT": str(out),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(root), *sys.path])}
    proc = subprocess.run([sys.executable, "-m", "pytest", str(paths.suites_dir()), "-p", "payconform.plugin",
                           "-p", "plan_dump", "--target", str(target), "--collect-only", "-q",
                           "-p", "no:cacheprovider", "-p", "no:randomly", *args],
                          env=env, cwd=root, capture_output=True, text=True, timeout=300, check=False)
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize(("credentials", "args", "many"), [
    pytest.param({"api_key": KEY}, (), False, id="one-key"),
    pytest.param({"api_key": KEY}, ("--run-slow",), True, id="one-key-run-slow"),
    pytest.param({"api_key": KEY, "api_key_pool": [KEY, KEY2]}, (), True, id="pool"),
])
def test_the_run_plans_what_its_keys_afford(tmp_path: Path, credentials: dict, args: tuple, many: bool) -> None:
    plans = _plans(tmp_path, credentials, *args)
    assert max(plans["crowds"]) == (101 if many else 21), plans
    assert plans["most_reads"] == (3 if many else 1)
    assert plans["walks"] and max(plans["walks"].values()) == plans["most_reads"], plans



def _repeats(case: dict) -> list[str]:
    return [r for r in case["skip"] if r.startswith("needs --run-slow or a key pool: on one key, one case")]


@pytest.mark.parametrize(("credentials", "args", "many"), [
    pytest.param({"api_key": KEY}, (), False, id="one-key"),
    pytest.param({"api_key": KEY}, ("--run-slow",), True, id="one-key-run-slow"),
    pytest.param({"api_key": KEY, "api_key_pool": [KEY, KEY2]}, (), True, id="pool"),
])
def test_breadth_runs_one_case_per_requirement_on_one_key(tmp_path: Path, credentials: dict, args: tuple,
                                                           many: bool) -> None:
    """On one key each `breadth` test still names every requirement of its cases through cases that run (no
    skip marker, no unmet need), and a case left out names one of those; with a pool or --run-slow none is."""
    cases = _plans(tmp_path, credentials, *args, operator={"adapter": "none"})["breadth"]
    assert len({nodeid.split("[")[0] for nodeid in cases}) >= 8, sorted(cases)
    left_out = {nodeid: case for nodeid, case in cases.items() if _repeats(case)}
    if many:
        assert not left_out
        return
    assert len(left_out) >= 20, sorted(left_out)
    for test in {nodeid.split("[")[0] for nodeid in cases}:
        mine = {n: c for n, c in cases.items() if n.split("[")[0] == test}
        running = {n: c for n, c in mine.items() if not c["skip"]}
        named = {r for c in running.values() for r in c["reqs"]}
        for nodeid, case in mine.items():
            if _repeats(case):
                assert set(case["reqs"]) <= named, (nodeid, named)
                assert any(f"[{n.split('[', 1)[1]}" in _repeats(case)[0] for n in running), (nodeid, case)
