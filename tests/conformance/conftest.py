"""Run the conformance suites against the reference server: pristine, tolerated variants and mutants.

Each run is a separate pytest process over `suites/` against a reference server started and provisioned
here, so a run sees the target exactly as a user's `payconform run --target FILE` would. The runs are
expensive, so they are made once per session by the fixtures below and every test reads their results;
the tests sit in one xdist group so that the session fixtures run on one worker only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pytest
import yaml

from payconform.cli.run import PYTEST_FLAGS
from payconform.cli.serve import limit_args
from payconform.listing import ENV_VAR as LISTING_ENV
from payconform.provision import provision_reference

from . import forked, variant_groups
from .forked import ForkedRefServer

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports" / "project-tests"
RUN_TIMEOUT = 900  # seconds: a stop for a hung run (a mutant run takes seconds, the pristine one minutes)
TOOL_TIMEOUT = 300  # seconds: a stop for a hung listing of the mutants or variants
PRISTINE = "pristine"  # the run of the unmodified reference, beside the mutant runs
MUTANT_POOL_SIZE = 20
MUTANT_FUZZ_BUDGET = 2  # the fuzz-* mutants, which only generated data finds, get the default budget
# A mutant that breaks every answer of a kind (error bodies, request ids) fails each fuzz test on its first
# requests, some 200 in all; one that breaks a single field lets the fuzz phase run to its end (~1,800
# requests, a minute of pacing) and is killed by its own tests. So the phase stops there for those.
MUTANT_FUZZ_MAX_REQUESTS = 600
# The contract fuzz tests (every operation against the OpenAPI documents) name the cross-cutting requirements
# (error bodies, request ids, media types), so every mutant of those would run them: minutes of a run slot
# each, under a mutant that breaks every answer of a kind. They run under the fuzz-* mutants, under the
# mutants whose requirements no other test names, and under these two, which make each of them fail (the kill
# matrix shows it); the other mutants are killed by their requirements' own tests.
CONTRACT_FUZZ = ("suites/fuzz/test_stateless.py", "suites/fuzz/test_stateful.py")
FUZZ_KILLERS = ("request-id-header-missing-on-errors", "error-status-as-string")
LONG_FIRST = ("suites/fuzz/", "suites/limits/", "suites/events/")  # the parts whose mutant runs take longest
# The files whose tests judge the per-credential rate limits: a mutant run of them is served at the spec's
# limits. Every other mutant run is served, and paced, at `SCALED_LIMITS` (declared in its target file, as the
# target shapes do): at 100 a minute a run of a test that makes a hundred rows waits a minute on the pacer.
RATE_FILES = ("suites/limits/test_rate_limit.py", "suites/limits/test_history_rate.py",
              "suites/limits/test_batch_rate.py")
SCALED_LIMITS = {"rate_limit": 2000, "ip_rate_limit": 40000}


@dataclass
class SuiteRun:
    """One pytest run of the suites against one reference server."""

    name: str
    returncode: int
    output: str
    report_dir: Path
    secrets: list[str]
    results: dict = field(default_factory=dict)
    exchanges: Path | None = None  # the reference's exchange log of the run (`--exchange-log`), when it kept one

    @property
    def tests(self) -> list[dict]:
        return self.results.get("tests", [])

    def with_outcome(self, *outcomes: str) -> dict[str, dict]:
        return {t["nodeid"]: t for t in self.tests if t["outcome"] in outcomes}

    def describe_failures(self) -> str:
        rows = self.with_outcome("failed", "error").values()
        lines = [f"- {t['nodeid']} {t.get('requirements')}: {(t.get('message') or '').splitlines()[:6]}" for t in rows]
        if not self.results:
            lines.append(f"(no results.json; exit {self.returncode}; output tail:)\n{self.output[-3000:]}")
        return "\n".join(lines)


def _reference_tool(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "payconform.reference", *args], cwd=ROOT, check=True,
                          capture_output=True, text=True, timeout=TOOL_TIMEOUT).stdout


def mutants() -> list[dict]:
    """The registered mutants, each `{name, reqs, doc}`."""
    return json.loads(_reference_tool("--list-mutants", "--json"))


def variants() -> list[dict]:
    return json.loads(_reference_tool("--list-variants", "--json"))


Suggester = Callable[[Path, str], dict]  # (target file, server root URL) -> the target file's `profile:`


def run_suite(name: str, *, mutant: str | None = None, select: list[str] | None = None,
              files: list[str] | None = None, workers: int = 0, choices: str | None = None,
              profile: dict | Suggester | None = None, exchanges: bool = False, tier: str = "full",
              limits: dict[str, int] | None = None) -> SuiteRun:
    """Start a (possibly mutant) reference server, provision it, and run the suites against it. `choices`: the
    reference's configuration where the spec does not show (`--choices`); `profile`: the target file's
    `profile:` override, or what works it out from the provisioned target as a user would (a `Suggester`);
    `exchanges`: the server logs every answer to `SuiteRun.exchanges`; `tier`: a whole run's `--tier`;
    `limits`: `rate_limit` and `ip_rate_limit` other than the spec's, served and declared (`SCALED_LIMITS`)."""
    out_dir = REPORTS / name
    out_dir.mkdir(parents=True, exist_ok=True)
    log = out_dir / "exchanges.jsonl" if exchanges else None
    if log is not None:
        log.unlink(missing_ok=True)
    limits = limits or {}
    extra = [*(["--exchange-log", str(log)] if log else []),
             *limit_args(limits.get("rate_limit"), limits.get("ip_rate_limit"))]
    with ForkedRefServer(mutant=mutant, choices=choices, extra_args=extra) as server, \
            tempfile.TemporaryDirectory(prefix="payconform-target-") as private:
        # a selected run with the fuzz phase gets a larger key pool: the phase is paced by per-key budgets
        fuzzing = bool(select) and any(f.startswith("suites/fuzz/") for f in files or [])
        target = provision_reference(server, **({"pool_size": MUTANT_POOL_SIZE} if fuzzing else {}), **limits)
        target_file = target.dump(Path(private) / "target.yaml")
        if profile is not None:
            target.profile = profile(target_file, server.root_url) if callable(profile) else profile
            target_file = target.dump(target_file)
        report_dir = out_dir / "report"
        shutil.rmtree(report_dir, ignore_errors=True)
        budget = None if (mutant or "").startswith("fuzz-") else MUTANT_FUZZ_BUDGET
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        if select:
            code, output = forked.run_pytest(_selected_args(select, files or [], target_file, report_dir, budget),
                                             cwd=ROOT, env=env, timeout=RUN_TIMEOUT)
        else:
            proc = subprocess.run(_full_run(target_file, report_dir, workers, tier), cwd=ROOT, capture_output=True,
                                  text=True, timeout=RUN_TIMEOUT, env=env)
            code, output = proc.returncode, proc.stdout + proc.stderr
        secrets = [*target.secrets(), server.operator_token]
    results_file = report_dir / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else {}
    return SuiteRun(name, code, output, report_dir, secrets, results, log)


def _full_run(target_file: Path, report_dir: Path, workers: int, tier: str) -> list[str]:
    """Exactly what a user runs: `payconform run --target FILE --tier TIER`, with JUnit and Allure output."""
    return [sys.executable, "-m", "payconform.cli", "run", "--target", str(target_file),
            "--report-dir", str(report_dir), "-n", str(workers or 0), "--tier", tier]


def _selected_args(select: list[str], files: list[str], target_file: Path, report_dir: Path,
                   fuzz_budget: int | None) -> list[str]:
    """pytest's arguments for only the files holding tests of the requirements, with `payconform run`'s flags
    (no assertion rewriting) and only the pytest plugins those files need (a mutant run is mostly start-up
    time: it is forked from a process that imported them, see ``forked``). The fuzz phase runs at
    ``fuzz_budget``: a small one does, since a mutant the fuzz checks see breaks every answer of its kind."""
    text = "".join((ROOT / f).read_text(encoding="utf-8") for f in files)
    unneeded = ["allure_pytest", "anyio", "xdist", "xdist.looponfail"]
    unneeded += [plugin for plugin, module in (("schemathesis", "schemathesis"), ("hypothesispytest", "hypothesis"))
                 if module not in text]
    return [*(files or ["suites"]),
            "-o", "addopts=", *PYTEST_FLAGS, *(a for p in unneeded for a in ("-p", f"no:{p}")), "-q",
            "--target", str(target_file), "--report-dir", str(report_dir), "--select", ",".join(select),
            *(["--fuzz-budget", str(fuzz_budget), "--fuzz-max-requests", str(MUTANT_FUZZ_MAX_REQUESTS)]
              if fuzz_budget else [])]


def run_many(jobs: dict[str, dict], parallel: int = 2) -> dict[str, SuiteRun]:
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {name: pool.submit(run_suite, name, **kwargs) for name, kwargs in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def suite_listing() -> list[dict]:
    """Every conformance test with its requirement ids, as a run collects them (`payconform run --list`'s
    collection): a test may take its ids from data (the transition catalog, the fuzz settings, the seeders)."""
    with tempfile.TemporaryDirectory(prefix="payconform-list-") as tmp:
        out = Path(tmp) / "list.json"
        subprocess.run([sys.executable, "-m", "pytest", "suites", "-p", "payconform.listing", "--collect-only", "-q",
                        "-o", "addopts=", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True,
                       timeout=RUN_TIMEOUT, env={**os.environ, LISTING_ENV: str(out)}, check=False)
        return json.loads(out.read_text(encoding="utf-8")) if out.exists() else []


def files_of(tests: list[dict], reqs: list[str]) -> list[str]:
    """The suite files holding tests that name any of `reqs`."""
    wanted = set(reqs)
    return sorted({t["nodeid"].split("::")[0] for t in tests if wanted & set(t.get("requirements") or [])})


def mutant_files(tests: list[dict], mutant: str, reqs: list[str]) -> list[str]:
    """The files a mutant's run selects: those of its requirements, without the contract fuzz tests where
    other tests name them too (see `CONTRACT_FUZZ`)."""
    files = files_of(tests, reqs)
    if mutant.startswith("fuzz-") or mutant in FUZZ_KILLERS or set(files) <= set(CONTRACT_FUZZ):
        return files
    return [f for f in files if f not in CONTRACT_FUZZ]


@pytest.fixture(scope="session")
def suite_tests() -> list[dict]:
    """The collected conformance tests with their requirement ids (`suite_listing`), once per session."""
    listing = suite_listing()
    assert listing, "collecting the suites listed no conformance test"
    return listing


@pytest.fixture(scope="session")
def reference_runs(suite_tests: list[dict]) -> dict[str, SuiteRun]:
    """The pristine run and every mutant run, side by side: the pristine run waits on the pacer, the mutant runs
    on the CPU. The long runs go first (`LONG_FIRST`: the fuzz phase, then the limits and events files, which wait
    on the pacer and on deliveries for up to a minute), within a part the runs of more tests first, and the short
ones fill the gaps. The mutant runs select
    their files from the collected suite, so they need not wait for the pristine run."""
    jobs = {m["name"]: {"mutant": m["name"], "select": m["reqs"],
                        "files": mutant_files(suite_tests, m["name"], m["reqs"])}
            for m in mutants()}
    for job in jobs.values():
        if not set(job["files"]) & set(RATE_FILES):
            job["limits"] = SCALED_LIMITS
    def weight(name: str) -> tuple[int, int]:
        """The long parts first, and within a part the runs of more tests first (a run of a part's every list
        started last would end the session on its own)."""
        files = jobs[name]["files"]
        part = min((rank for rank, prefix in enumerate(LONG_FIRST) if any(f.startswith(prefix) for f in files)),
                   default=len(LONG_FIRST))
        wanted = set(jobs[name]["select"])
        return part, -sum(1 for t in suite_tests if wanted & set(t.get("requirements") or []))

    order = sorted(jobs, key=weight)
    forked.start()
    return run_many({PRISTINE: {"workers": 2, "exchanges": True}, **{name: jobs[name] for name in order}}, parallel=8)


@pytest.fixture(scope="session")
def pristine_run(reference_runs: dict[str, SuiteRun]) -> SuiteRun:
    return reference_runs[PRISTINE]


@pytest.fixture(scope="session")
def mutant_runs(reference_runs: dict[str, SuiteRun]) -> dict[str, SuiteRun]:
    return {name: run for name, run in reference_runs.items() if name != PRISTINE}


def variant_plan() -> dict[str, list[str]]:
    """Run id -> the variants applied together in that whole-suite run (see `variant_groups`)."""
    return variant_groups.plan([v["name"] for v in variants()])


OTHER_CHOICES = "other"  # the reference's second configuration (`--choices other`)


def suggester(*runs: SuiteRun) -> Suggester:
    """What `payconform profile suggest --openapi ROOT/openapi.json --results RUN...` prints for a target, as a
    user runs it between runs: the deployment's own document and what the earlier runs' mismatches found."""
    def suggest(target_file: Path, root_url: str) -> dict:
        results = [arg for run in runs for arg in ("--results", str(run.report_dir / "results.json"))]
        proc = subprocess.run([sys.executable, "-m", "payconform.cli", "profile", "suggest", "--target",
                               str(target_file), "--openapi", f"{root_url}/openapi.json", *results], cwd=ROOT,
                              capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False)
        assert proc.returncode == 0, f"profile suggest ended with {proc.returncode}:\n{proc.stderr[-3000:]}"
        return yaml.safe_load(proc.stdout) or {}
    return suggest


def other_choice_chain() -> dict[str, SuiteRun]:
    """A user's way to the profile of a deployment that chose otherwise wherever the spec does not show: a run
    with the default profile (every difference a mismatch), a run with what `profile suggest` makes of the
    deployment's OpenAPI document and that run (the payout scenarios, selected the other way, still mismatches
    naming `select_by`), and a run with what it makes of both runs (nothing left to set)."""
    default = run_suite("other-choices-default-profile", choices=OTHER_CHOICES, workers=2)
    documented = run_suite("other-choices-documented-profile", choices=OTHER_CHOICES, workers=2,
                           profile=suggester(default))
    suggested = run_suite("other-choices-suggested-profile", choices=OTHER_CHOICES, workers=2,
                          profile=suggester(default, documented))
    return {run.name: run for run in (default, documented, suggested)}


@pytest.fixture(scope="session")
def whole_runs() -> dict[str, SuiteRun]:
    """The whole-suite runs of the tolerated variants and of the other configuration, side by side: they wait
    mostly on the pacer (the per-IP ceiling) and on sandbox timelines, not the CPU."""
    forked.start()
    jobs = {run: {"mutant": ",".join(names), "workers": 2, "exchanges": True} for run, names in variant_plan().items()}
    with ThreadPoolExecutor(max_workers=len(jobs) + 1) as pool:
        chain = pool.submit(other_choice_chain)
        futures = {name: pool.submit(run_suite, name, **kwargs) for name, kwargs in jobs.items()}
        return {**{name: f.result() for name, f in futures.items()}, **chain.result()}


@pytest.fixture(scope="session")
def variant_runs(whole_runs: dict[str, SuiteRun]) -> dict[str, SuiteRun]:
    return {run: whole_runs[run] for run in variant_plan()}


@pytest.fixture(scope="session")
def other_choice_runs(whole_runs: dict[str, SuiteRun]) -> dict[str, SuiteRun]:
    return {name: run for name, run in whole_runs.items() if name.startswith("other-choices-")}


def iter_report_files(run: SuiteRun) -> Iterator[Path]:
    yield from (p for p in run.report_dir.rglob("*") if p.is_file())
