"""The option table (``payconform.options``): one help text per option on both command lines, forwarding from
``payconform run`` to its pytest run, internal knobs out of the user help, and no computed figure in a help."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest

from payconform import options
from payconform.cli.parser import add_options, build_parser
from payconform.cli.run import pytest_command
from payconform.options import OPTIONS, RUN, TARGET, TARGET_FLAGS, Option, pytest_args
from payconform.plugin import options as plugin_options
from payconform.target import FLAG_FIELDS
from payconform.pacing.tiers import SPEC_RATE, TIERS, Pace

pytest_plugins = ["pytester"]

SHARED = [o for o in OPTIONS if o.in_cli and o.in_pytest]
FORWARDED = [o for o in OPTIONS if o.forward]
# The values `payconform run` settles itself before its pytest run (the target file it writes, ...).
SETTLED = {"target", "report_dir", "max_duration"}


class _ArgumentRecorder:
    """An argparse parser that records what `add_options` adds to `payconform run`, by option string."""

    def __init__(self) -> None:
        self.added: dict[str, SimpleNamespace] = {}

    def add_argument_group(self, *args: Any, **kwargs: Any) -> _ArgumentRecorder:
        return self

    def add_argument(self, *names: str, **kwargs: Any) -> None:
        for name in names:
            self.added[name] = SimpleNamespace(**kwargs)


def _run_actions() -> dict[str, SimpleNamespace]:
    """`payconform run`'s options by option string, as `add_options` declares them."""
    recorder = _ArgumentRecorder()
    for group in (TARGET, RUN):
        add_options(recorder, group)  # type: ignore[arg-type]
    return recorder.added


def _run_help() -> str:
    """`payconform run --help`, as a user reads it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        build_parser().parse_args(["run", "--help"])
    return out.getvalue()


class _Recorder:
    """A pytest parser and plugin manager that record what the plugin registers."""

    def __init__(self, base_url_plugin: bool) -> None:
        self.base_url_plugin = base_url_plugin
        self.added: dict[str, dict[str, Any]] = {}

    def getgroup(self, name: str, description: str = "") -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        for name in names:
            self.added[name] = kwargs

    def has_plugin(self, name: str) -> bool:
        return self.base_url_plugin

    def is_blocked(self, name: str) -> bool:
        return not self.base_url_plugin


def _pytest_options(base_url_plugin: bool = False) -> dict[str, dict[str, Any]]:
    recorder = _Recorder(base_url_plugin)
    plugin_options.pytest_addoption(recorder, recorder)  # type: ignore[arg-type]
    return recorder.added


@pytest.mark.parametrize("opt", SHARED, ids=lambda o: o.name)
def test_a_shared_option_has_the_same_help_on_both_command_lines(opt: Option) -> None:
    cli_help = _run_actions()[opt.name].help
    pytest_added = _pytest_options()
    assert cli_help == pytest_added[opt.pytest_names[0]]["help"]
    assert cli_help == (argparse.SUPPRESS if opt.internal else opt.help_text)
    for name in opt.pytest_names:
        assert pytest_added[name]["dest"] == opt.pytest_dest


def test_every_spelling_answers_on_both_command_lines() -> None:
    actions = _run_actions()
    added = _pytest_options()
    assert {s for o in OPTIONS if o.in_cli for s in o.cli_names} <= set(actions)
    assert {"-n", "--workers", "--mutant", "--suites", "--list", "--baseline", "--warnings-as-errors"} <= set(actions)
    assert set(added) == {n for o in OPTIONS if o.in_pytest for n in o.pytest_names}
    assert {"--payconform-embedded", "--payconform-mutant", "--base-url", "--payconform-base-url", "--no-fuzz",
            "--payconform-no-fuzz", "--fuzz-seed", "--payconform-fuzz-seed"} <= set(added)
    assert "--mutant" not in added  # pytest has it only as --payconform-mutant
    assert added["--payconform-fuzz-seed"]["default"] == options.FUZZ_SEED


def test_with_pytest_base_url_the_plugin_leaves_base_url_to_it() -> None:
    added = _pytest_options(base_url_plugin=True)
    assert "--base-url" not in added
    assert added["--payconform-base-url"]["help"].startswith(TARGET_FLAGS["base_url"].help_text)


def test_the_target_flags_are_the_target_overrides() -> None:
    assert set(TARGET_FLAGS) == set(FLAG_FIELDS)
    ns = build_parser().parse_args(["check", "--base-url", "http://h/business/api/v1", "--api-key-pool", "a,b"])
    assert ns.base_url == "http://h/business/api/v1" and ns.api_key_pool == "a,b"


def _given(opt: Option) -> tuple[list[str], Any]:
    """A value for ``opt`` on `payconform run`'s command line, and the value pytest should see."""
    if opt.action == "store_true":
        return [opt.name], True
    if opt.choices:
        return [opt.name, opt.choices[-1]], opt.choices[-1]
    if opt.type is int:
        return [opt.name, "7"], 7
    if opt.type is float:
        return [opt.name, "12.5"], 12.5
    return [opt.name, f"value-of-{opt.dest}"], f"value-of-{opt.dest}"


def _round_trip(pytester: pytest.Pytester, argv: list[str], workers: str = "0",
                max_duration: float | None = None) -> tuple[pytest.Config, list[str]]:
    """`payconform run argv` parsed, the pytest command run.py builds from it, and that command parsed by pytest."""
    ns = build_parser().parse_args(["run", *argv])
    report_dir = pytester.path / "rep"
    cmd = pytest_command(ns, pytester.path, pytester.path / "target.yaml", report_dir, workers, max_duration)
    assert cmd[:4] == [sys.executable, "-m", "pytest", str(pytester.path)]
    return pytester.parseconfig(*cmd[4:]), cmd


def test_each_forwarded_option_reaches_the_pytest_run(pytester: pytest.Pytester) -> None:
    argv: list[str] = []
    expected: dict[str, Any] = {}
    for opt in FORWARDED:
        given, value = _given(opt)
        if opt.dest not in SETTLED:
            argv += given
            expected[opt.pytest_dest] = value
    config, cmd = _round_trip(pytester, argv, max_duration=12.34)
    expected.update(payconform_target=str(pytester.path / "target.yaml"),
                    payconform_report_dir=str(pytester.path / "rep"), payconform_max_duration=12.3)
    assert {dest: config.getoption(dest) for dest in expected} == expected
    assert "-n" not in cmd  # 0 workers: one process


def test_only_what_was_given_is_forwarded(pytester: pytest.Pytester) -> None:
    config, cmd = _round_trip(pytester, [], workers="3")
    forwarded = [a for a in cmd if a.startswith("--") and any(a == o.name for o in FORWARDED)]
    assert forwarded == ["--target", "--report-dir"]
    assert cmd[cmd.index("-n"):cmd.index("-n") + 4] == ["-n", "3", "--dist", "loadgroup"]
    for opt in FORWARDED:
        if opt.dest not in SETTLED:
            assert config.getoption(opt.pytest_dest) == opt.default, opt.name


def test_no_fuzz_reaches_the_pytest_run_as_a_zero_budget(pytester: pytest.Pytester) -> None:
    config, cmd = _round_trip(pytester, ["--no-fuzz", "--fuzz-max-requests", "0"])
    assert config.getoption("payconform_fuzz_budget") == 0
    assert config.getoption("payconform_fuzz_max_requests") == 0


def test_run_list_forwards_only_the_selection() -> None:
    ns = build_parser().parse_args(["run", "--list", "--select", "IDEM-*", "--tier", "smoke", "--run-slow",
                                    "--fuzz-seed", "3"])
    assert pytest_args(vars(ns), selection_only=True) == ["--select", "IDEM-*", "--tier", "smoke"]


def test_internal_knobs_work_and_stay_out_of_the_user_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")
    internal = [o for o in OPTIONS if o.internal]
    assert {o.name for o in internal} == {"--mutant", "--suites"}
    text = _run_help()
    for opt in internal:
        assert opt.name not in text
    ns = build_parser().parse_args(["run", "--mutant", "m1", "--suites", "elsewhere"])
    assert (ns.mutant, ns.suites) == ("m1", "elsewhere")
    for opt in OPTIONS:
        if opt.in_cli and not opt.internal:
            assert " ".join(opt.help_text.split()) in " ".join(text.split()), opt.name


def test_pytest_help_shows_the_table_and_hides_the_internal_knobs(pytester: pytest.Pytester) -> None:
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--help"], capture_output=True,
                         text=True, env={**os.environ, "COLUMNS": "1000"}, cwd=pytester.path, check=True)
    text = " ".join(res.stdout.split())
    for opt in OPTIONS:
        if opt.in_pytest and not opt.internal:
            assert " ".join(opt.help_text.split()) in text, opt.name
    assert "--payconform-mutant" not in text
    config = pytester.parseconfig("--payconform-mutant", "m1")
    assert config.getoption("payconform_mutant") == "m1"


def _computed_figures() -> set[str]:
    """The request budgets and fuzz budgets a run computes (per tier, for 1 to 25 keys): no help may state one."""
    figures = set()
    for t in TIERS.values():
        figures |= {t.request_budget, t.suite_requests, t.fuzz_requests, t.seconds}
        for keys in range(1, 26):
            figures |= {t.budget(Pace(keys)), t.fuzz_budget(Pace(keys)), t.planned(Pace(keys))}
    return {f"{int(n):,}" for n in figures} | {str(int(n)) for n in figures}


def test_no_help_states_a_computed_figure() -> None:
    constants = {"0", "1", "127", str(SPEC_RATE), str(options.FUZZ_SEED), options.DEFAULT_WORKERS,
                 options.POOL_WORKERS, options.REAL_TIME_SMOKE_WORKERS}
    computed = _computed_figures() - {"0"}
    assert {"420", "520", "1,500", "300", "1,753"} & computed  # the figures the helps once stated
    for opt in OPTIONS:
        numbers = set(re.findall(r"\d+(?:,\d{3})*", opt.help_text))
        assert numbers <= constants, (opt.name, numbers - constants)
        if opt.name == "--rate-limit":
            numbers -= {str(SPEC_RATE)}  # the spec's rate, a constant where it stands for the rate limit
        assert not numbers & computed, (opt.name, numbers & computed)
    for name in ("--tier", "--fuzz-budget", "--fuzz-max-requests"):
        assert not re.search(r"[1-9]", next(o for o in OPTIONS if o.name == name).help_text), name  # 0: none


def test_the_table_module_does_not_import_pytest() -> None:
    code = "import sys, payconform.options; sys.exit('pytest' in sys.modules or '_pytest' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
