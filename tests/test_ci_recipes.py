"""The CI recipes under recipes/ are files users copy into their pipelines unread: each must be valid YAML of
its CI system, trigger the smoke tier on pull (merge) requests and the full tier on schedules, keep the report
and JUnit where payconform writes them even when the run fails, and run commands payconform accepts."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import payconform
from payconform.cli.parser import build_parser
from payconform.results.baseline import dump
from payconform.target import Target

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
GITHUB = RECIPES / "github-actions.yml"
GITLAB = RECIPES / "gitlab-ci.yml"
TARGET = RECIPES / "payconform-target.yaml"
DOC = ROOT / "docs" / "ci-recipes.md"
PINNED_ACTION = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")
SECRET_REF = re.compile(r"^\$\{\{\s*secrets\.(\w+)\s*\}\}$")
# a small part of the smoke tier: one test, so the recipe's own command line runs in seconds
CHEAP_SELECTION = ["--select", "versioning", "-n", "0"]


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _commands(script: str | list[str]) -> list[list[str]]:
    """The `payconform` command lines of a step's `run` or a job's `script`, as argv lists."""
    lines = [script] if isinstance(script, str) else list(script)
    text = "\n".join(lines).replace("\\\n", " ")
    return [shlex.split(line) for line in text.splitlines() if line.strip().startswith("payconform ")]


def _parse(argv: list[str]):
    """``argv`` through payconform's own argument parser, as the console script parses it."""
    assert argv[0] == "payconform", argv
    try:
        return build_parser().parse_args(argv[1:])
    except SystemExit as exc:
        pytest.fail(f"payconform rejects the recipe's command line {shlex.join(argv)} (exit {exc.code})")


def _github() -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    """The workflow's triggers (YAML 1.1 reads the key `on` as True), its one job, and its command by tier."""
    workflow = _load(GITHUB)
    triggers = workflow.get("on", workflow.get(True))
    (job,) = workflow["jobs"].values()
    commands = {}
    for step in job["steps"]:
        for argv in _commands(step.get("run", "")):
            commands[_parse(argv).tier] = (argv, step.get("if", ""))
    assert set(commands) == {"smoke", "full"}, f"the workflow runs the tiers {sorted(commands)}"
    assert commands["smoke"][1] == "github.event_name == 'pull_request'"
    assert commands["full"][1] == "github.event_name != 'pull_request'"
    return triggers, job, {name: argv for name, (argv, _) in commands.items()}


def _gitlab() -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The jobs that run payconform (their `extends` merged in) and their command by tier."""
    config = _load(GITLAB)
    jobs = {name: {**config.get(job.get("extends", ""), {}), **job} for name, job in config.items()
            if not name.startswith(".") and isinstance(job, dict)}
    commands = {}
    for job in jobs.values():
        for argv in _commands(job["script"]):
            commands[_parse(argv).tier] = argv
    assert set(commands) == {"smoke", "full"}, f"the jobs run the tiers {sorted(commands)}"
    return jobs, commands


def _sources(job: dict[str, Any]) -> set[str]:
    """The pipeline sources a GitLab job's rules admit."""
    return {source for rule in job["rules"] for source in re.findall(r'\$CI_PIPELINE_SOURCE == "(\w+)"', rule["if"])}


@pytest.mark.parametrize(("recipe", "schema"), [(GITHUB, "vendor.github-workflows"), (GITLAB, "vendor.gitlab-ci")],
                         ids=["github", "gitlab"])
def test_each_recipe_is_valid_for_its_ci_system(recipe: Path, schema: str):
    """Against the CI system's own schema, as check-jsonschema ships it (no network)."""
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(recipe)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{recipe.name} is not valid for {schema}:\n{proc.stdout}\n{proc.stderr}"


def test_the_github_workflow_gates_pull_requests_with_smoke_and_runs_full_nightly():
    triggers, job, commands = _github()
    assert {"pull_request", "schedule"} <= set(triggers) and triggers["schedule"][0]["cron"]
    smoke, full = _parse(commands["smoke"]), _parse(commands["full"])
    assert smoke.target == full.target == "payconform-target.yaml"
    assert smoke.baseline and full.baseline and smoke.baseline != full.baseline, "one baseline per tier"
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert uses and all(PINNED_ACTION.match(u) for u in uses), f"actions not pinned to a commit: {uses}"
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()", "the report of a failed run is the one most needed"
    assert upload["with"]["path"].rstrip("/") == smoke.report_dir == full.report_dir


def test_the_github_workflow_reads_every_secret_of_the_target_file_from_the_secret_store():
    _, job, _ = _github()
    secrets = {name: SECRET_REF.match(value) for name, value in job["env"].items()}
    assert all(secrets.values()), f"job environment not from the secret store: {job['env']}"
    referenced = set(re.findall(r"^\s*\w+: env:(\w+)", TARGET.read_text(encoding="utf-8"), re.M))
    assert referenced and referenced <= set(secrets), f"the target file reads {referenced}, the job sets {set(secrets)}"
    target = Target.load(TARGET, environ={name: "svc_test_recipe" for name in referenced})
    assert "svc_test_recipe" in target.secrets()


def test_the_gitlab_jobs_match_the_github_workflow():
    jobs, commands = _gitlab()
    _, _, github = _github()
    assert commands == github, "the two recipes run the same commands"
    by_tier = {_parse(argv).tier: job for job in jobs.values() for argv in _commands(job["script"])}
    assert _sources(by_tier["smoke"]) == {"merge_request_event"}
    assert "schedule" in _sources(by_tier["full"]) and "merge_request_event" not in _sources(by_tier["full"])
    report_dir = _parse(commands["smoke"]).report_dir
    for job in jobs.values():
        artifacts = job["artifacts"]
        assert artifacts["when"] == "always", "the report of a failed run is the one most needed"
        assert [p.rstrip("/") for p in artifacts["paths"]] == [report_dir]
        assert artifacts["reports"]["junit"] == f"{report_dir}/junit.xml"


def test_the_recipes_install_the_version_they_were_tested_with():
    """A baseline names tests of one payconform version: the recipes pin it, and the pin follows releases."""
    installs = re.findall(r'pip install --quiet "payconform==([^"]+)"',
                          GITHUB.read_text(encoding="utf-8") + GITLAB.read_text(encoding="utf-8"))
    assert installs == [payconform.__version__] * 2


def test_the_page_names_what_users_must_set():
    text = DOC.read_text(encoding="utf-8")
    for needed in ("PAYCONFORM_API_KEY", "recipes/github-actions.yml", "recipes/gitlab-ci.yml",
                   "payconform-baseline-smoke.yaml", "payconform-baseline-full.yaml", "GITHUB_STEP_SUMMARY"):
        assert needed in text, f"docs/ci-recipes.md does not mention {needed}"


def _payconform(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}  # a CI runner's, not this test's
    return subprocess.run([sys.executable, "-m", "payconform.cli", *argv[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)


def _without_target(argv: list[str]) -> list[str]:
    """``argv`` without ``--target FILE``: payconform runs against its embedded reference server."""
    i = argv.index("--target")
    return argv[:i] + argv[i + 2:]


def test_the_pull_request_command_passes_and_leaves_what_the_pipelines_upload(tmp_path: Path):
    """The smoke command of the recipes, with the embedded reference server as target, gated by an empty
    baseline (what `payconform baseline update` writes from a run that failed and skipped nothing). Only one
    small part of the tier runs (`--select`, one process): the whole smoke tier runs elsewhere in the project's
    tests; here the point is the command line and the files it leaves where the upload steps look."""
    _, commands = _gitlab()
    ns = _parse(commands["smoke"])
    dump([], tmp_path / ns.baseline, tier="smoke")
    proc = _payconform(_without_target(commands["smoke"]) + CHEAP_SELECTION, tmp_path)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "CI gate passed" in proc.stdout + proc.stderr
    report = tmp_path / ns.report_dir
    assert {"index.html", "results.json", "junit.xml"} <= {p.name for p in report.iterdir()}
    jobs, _ = _gitlab()
    assert all((tmp_path / job["artifacts"]["reports"]["junit"]).is_file() for job in jobs.values())


def test_the_nightly_command_collects(tmp_path: Path):
    """The full-tier command as written, with `--list`: it collects the tier and writes no report."""
    _, commands = _gitlab()
    proc = _payconform(commands["full"] + ["--list"], tmp_path)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert re.search(r"^\d+ tests checking \d+ requirements", proc.stdout, re.M)
    assert not (tmp_path / _parse(commands["full"]).report_dir).exists(), "--list wrote a report"
