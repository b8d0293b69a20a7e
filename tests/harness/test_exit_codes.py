"""The exit codes of `payconform run`: each documented, each distinct, and each what a run of its kind answers."""

from __future__ import annotations

import argparse
import json
import re
import signal
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

import payconform
from payconform.cli import main
from payconform.cli.exit_codes import ExitCode, from_pytest, signalled
from payconform.cli.outcome import settle
from payconform.cli.pytest_proc import Ended
from payconform.receiver import cli as receiver_cli

from .fake_project import cli

ROOT = Path(payconform.__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "payconform" / "schemas" / "results.schema.json").read_text())
SECRET = "svc_test_" + "7" * 32 + "_" + "B" * 43


def test_the_codes_are_distinct_and_the_ci_gate_page_lists_each() -> None:
    section = (ROOT / "docs" / "ci-gate.md").read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| (\d+(?: \+ N)?) \|", section, flags=re.M)
    assert listed == [str(int(code)) for code in ExitCode] + ["128 + N"]
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4] and signalled(signal.SIGINT) == 130
    assert [from_pytest(c) for c in (0, 1, 2, 3, 4, 5, -15)] == [0, 1, 2, 2, 4, 2, 143]


@pytest.mark.parametrize("argv", [["run", "--no-such-flag"], ["run", "--tier", "huge"], ["profile"],
                                  ["report", "diff", "only-one"], ["baseline"]])
def test_a_bad_command_line_exits_4(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == ExitCode.USAGE
    assert "error:" in capsys.readouterr().err


def test_no_command_prints_the_help_and_exits_4(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == ExitCode.USAGE and "COMMAND" in capsys.readouterr().err


def test_the_receiver_kit_alone_exits_4_on_a_bad_command_line() -> None:
    with pytest.raises(SystemExit) as info:
        receiver_cli.main(["--secret", "whsec_x"])  # no --url
    assert info.value.code == ExitCode.USAGE


def _ns(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"baseline": None, "warnings_as_errors": False, "strict_profile": False, **given})


def _report(tmp_path: Path, verdicts: list[str], how: str = "complete", **extra: object) -> Path:
    tests = [{"nodeid": f"t::{i}", "requirements": ["A-1"], "outcome": v,
              "verdict": v, "duration": 0.0} for i, v in enumerate(verdicts)]
    data = {"run": {"started": "s", "finished": "f", "target": "http://h", "contract_version": "1",
                    "ended": {"how": how, "detail": "d", "not_run": verdicts.count("not_run")}},
            "tests": tests, "requirements": [], **extra}
    jsonschema.validate(data, SCHEMA)
    (tmp_path / "results.json").write_text(json.dumps(data))
    return tmp_path


TARGET = SimpleNamespace(secrets=lambda: [SECRET])


@pytest.mark.parametrize(("verdicts", "how", "ended", "code"), [
    (["passed", "not_run"], "max_duration", Ended(1), ExitCode.OUT_OF_TIME),
    (["passed", "not_run"], "max_duration", Ended(2, hard_stop=True), ExitCode.OUT_OF_TIME),
    (["failed", "not_run"], "max_duration", Ended(1), ExitCode.FAILED),
    (["failed", "not_run"], "maxfail", Ended(1), ExitCode.FAILED),
    (["passed", "skipped"], "complete", Ended(0), ExitCode.PASSED),
    (["passed", "not_run"], "interrupted", Ended(2, signum=signal.SIGTERM), 128 + signal.SIGTERM),
    ([], "complete", Ended(5), ExitCode.CANNOT_TEST),
    ([], "complete", Ended(4), ExitCode.USAGE),
])
def test_a_finished_run_answers_its_code(tmp_path, verdicts, how, ended, code) -> None:
    assert settle(_ns(), _report(tmp_path, verdicts, how), TARGET, ended) == code


def test_a_leaked_secret_fails_a_run_out_of_time(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(tmp_path, ["passed", "not_run"], "max_duration")
    (report / "junit.xml").write_text(f"<testsuite>{SECRET}</testsuite>")
    assert settle(_ns(), report, TARGET, Ended(1)) == ExitCode.FAILED
    assert "secret leak" in capsys.readouterr().err


SLOW = """
import time

import pytest


@pytest.mark.req("DEMO-PASS")
@pytest.mark.parametrize("n", [1, 2, 3])
def test_takes_two_seconds(n):
    time.sleep(2)
"""


def test_max_duration_with_nothing_failed_exits_3_and_the_artifacts_say_so(workdir, ref_target) -> None:
    """The run has one second left after the preflight; three of its tests take two seconds each, so on two
    workers at least one test starts after the deadline and is left not run, however fast the workers start."""
    _, path = ref_target
    (workdir / "suites" / "endpoints" / "test_slow.py").write_text(SLOW)
    res = cli(workdir, "run", "--target", str(path), "--select", "DEMO-PASS", "-n", "2", "--max-duration", "0.001",
              "--report-dir", "rt")
    assert res.returncode == ExitCode.OUT_OF_TIME, res.stdout + res.stderr
    assert "--max-duration reached" in res.stderr
    data = json.loads((workdir / "rt" / "results.json").read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["run"]["ended"]["how"] == "max_duration" and data["run"]["ended"]["not_run"] > 0
    assert '<property name="payconform_ended" value="max_duration"' in (workdir / "rt" / "junit.xml").read_text()
    assert "This run ended early" in (workdir / "rt" / "index.html").read_text()


def test_pytest_refusing_its_arguments_exits_4_and_leaves_no_report(workdir, ref_target) -> None:
    _, path = ref_target
    res = cli(workdir, "run", "--target", str(path), "-n", "0", "--report-dir", "ru", "--", "--no-such-pytest-flag")
    assert res.returncode == ExitCode.USAGE, res.stdout + res.stderr
    assert "pytest refused its arguments" in res.stderr
    assert not (workdir / "ru").exists()
