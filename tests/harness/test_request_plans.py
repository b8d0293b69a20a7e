"""What a run plans to spend on the checks that take many requests (the `many_requests` need, issue 16): on one
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
from suites._support import machines, payments

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    with open(os.environ["PLAN_OUT"], "w") as fh:
        json.dump({"crowds": payments.CROWDS, "walks": machines.PLAN, "most_reads": machines.MOST_READS[0]}, fh)
'''
KEY, KEY2 = "svc_test_" + "a" * 32 + "_" + "b" * 43, "svc_test_" + "c" * 32 + "_" + "d" * 43


def _plans(tmp_path: Path, credentials: dict, *args: str) -> dict:
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"base_url": "http://127.0.0.1:9/business/api/v1", "org_id": "ckorg1",
                                  "credentials": credentials}))
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

