"""A test that runs out of time says what it was waiting for, not only "Timeout (>120.0s)"."""

from __future__ import annotations

import json
import textwrap

import pytest

from payconform.results.records import TestRecord
from payconform.suite import waiting_for

from .fake_project import write_project

pytest_plugins = ["pytester"]

SLOW = textwrap.dedent('''
    import time
    import pytest
    from payconform.suite import waiting_for

    @pytest.mark.req("DEMO-PASS")
    @pytest.mark.timeout(0.5)
    def test_waits_for_a_delivery():
        with waiting_for("a payout.created delivery at http://127.0.0.1:1/box"):
            with waiting_for("the answer to GET /orders/po_1"):
                time.sleep(5)

    @pytest.mark.req("DEMO-PASS")
    @pytest.mark.timeout(0.5)
    def test_waited_before():
        with waiting_for("an answer that came"):
            pass
        time.sleep(5)
''')


def test_a_timed_out_test_names_its_waits(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                          ref_target) -> None:
    write_project(pytester.path)
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    (pytester.path / "suites" / "endpoints" / "test_slow.py").write_text(SLOW)
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-o", "timeout_method=signal",
                                        "suites/endpoints/test_slow.py", "--target", str(ref_target[1]),
                                        "--report-dir", "out")
    res.assert_outcomes(failed=2)
    out = res.stdout.str()
    assert ("Failed: Timeout (>0.5s) from pytest-timeout, while waiting for a payout.created delivery at "
            "http://127.0.0.1:1/box; within it, for the answer to GET /orders/po_1") in out
    assert "while waiting for an answer that came" not in out  # a wait that ended is forgotten
    data = json.loads((pytester.path / "out" / "results.json").read_text())
    rows = {t["nodeid"].split("::")[1]: t for t in data["tests"]}
    assert "within it, for the answer to GET /orders/po_1" in rows["test_waits_for_a_delivery"]["message"]


def test_a_wait_ended_by_another_failure_is_forgotten(record: TestRecord) -> None:
    with pytest.raises(ValueError):
        with waiting_for("a state"):
            raise ValueError("the predicate broke")
    assert record.waits == []
    with waiting_for("the answer to GET /x"):
        assert record.waits == ["the answer to GET /x"]
    assert record.waits == []
