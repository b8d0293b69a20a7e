"""``payconform run``: pytest over the suites against a target (or the embedded reference), ``--list`` and
``-- --co``."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from ..pacing import pacer as pacing
from .. import paths
from ..pacing.files import run_db_path
from ..context import RunContext
from ..pacing.cost import STARTED_VAR, estimate
from ..options import DEFAULT_WORKERS, POOL_WORKERS, REAL_TIME_SMOKE_WORKERS, pytest_args
from ..target import Target, TargetConfigError, flag_overrides
from ..pacing.tiers import Pace, tier
from ..target.fields import WEBHOOK_FLAGS
from .check import preflight_blocks
from .exit_codes import ExitCode, from_pytest, signalled
from .outcome import settle
from .pytest_proc import Stopped, run_pytest, stoppable
from .serve import start_reference

REAL_TIME_WAITS = 900.0  # a one-key run at scaled limits took its whole default budget (806 s) and left tests not run
HARD_STOP_GRACE = 30.0  # seconds the tests in flight at --max-duration get before the run interrupts them
# pytest's cache (what --lf, --ff and --sw read) lives in the directory payconform run is started from, never
# beside the suites: the rootdir of a run is the installed package's suites directory.
CACHE_DIR = ".payconform_cache"
HYPOTHESIS_DIR = "HYPOTHESIS_STORAGE_DIRECTORY"  # where Hypothesis keeps its examples (default: ./.hypothesis)
COLLECT_ONLY = ("--co", "--collect-only", "--collectonly")


def _default_report_dir() -> Path:
    return Path("reports") / datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _suites_dir(ns: argparse.Namespace) -> Path:
    return Path(ns.suites) if ns.suites else paths.suites_dir()


# Plugins a run does without, and no assert rewriting: the suites' verdicts come from payconform.checks.expect, and
# pytest rewrites every module of its plugins' distributions (schemathesis, hypothesis), about 3 s of CPU in
# each pytest process where bytecode is not cached (PYTHONDONTWRITEBYTECODE).
RUN_FLAGS = ("-p", "no:benchmark", "--assert=plain")
# A pytest run that keeps no cache (--list, and the project's own tests of the suites).
PYTEST_FLAGS = ("-p", "no:cacheprovider", *RUN_FLAGS)


def _cache_dir() -> Path:
    """The run's caches (pytest's: `--lf`, `--ff`; Hypothesis's examples) in the working directory, kept out of
    version control by a `.gitignore` of their own."""
    cache = Path.cwd() / CACHE_DIR
    cache.mkdir(exist_ok=True)
    ignore = cache / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# payconform's run caches (pytest's and Hypothesis's)\n*\n", encoding="utf-8")
    return cache


def cmd_list(ns: argparse.Namespace, extra: list[str]) -> int:
    """``run --list``: ``pytest --collect-only`` with the selection applied, grouped by requirement."""
    from ..contract import run_contract
    from ..listing import ENV_VAR

    suites = _suites_dir(ns)
    with tempfile.TemporaryDirectory(prefix="payconform-list-") as tmp:
        out = Path(tmp) / "list.json"
        cmd = [sys.executable, "-m", "pytest", str(suites), "-p", "payconform.plugin", "-p", "payconform.listing",
               "--collect-only", "-q", "--continue-on-collection-errors", *PYTEST_FLAGS]
        cmd += pytest_args(vars(ns), selection_only=True)
        # Hypothesis's storage in the temporary folder: a listing leaves nothing behind
        env = dict(os.environ, **{ENV_VAR: str(out), HYPOTHESIS_DIR: str(Path(tmp) / "hypothesis")})
        proc = subprocess.run(cmd + extra, env=env, check=False,
                              capture_output=True, text=True)
        if not out.exists():
            sys.stderr.write(proc.stdout + proc.stderr)
            print(f"payconform: cannot list the tests (pytest exit code {proc.returncode})", file=sys.stderr)
            return from_pytest(proc.returncode) if proc.returncode else ExitCode.CANNOT_TEST
        rows = json.loads(out.read_text(encoding="utf-8"))
    contract = run_contract()
    by_req: dict[str, list[str]] = {}
    for row in rows:
        for rid in row["requirements"]:
            by_req.setdefault(rid, []).append(row["nodeid"])
    order = [r for r in contract.requirements if r in by_req] + sorted(r for r in by_req if r not in contract.requirements)
    for rid in order:
        info = contract.requirements.get(rid) or {}
        print(f"{rid}  [{info.get('part') or '?'}]  {(info.get('quote') or '').strip()[:100]}")
        for nodeid in by_req[rid]:
            print(f"    {nodeid}")
    print(f"{len(rows)} tests checking {len(order)} requirements "
          f"(of {len(contract.requirements)} in the contract)")
    if proc.returncode not in (0, 5):
        errors = [ln for ln in proc.stdout.splitlines() if ln.startswith("ERROR ")]
        print("payconform: some suite files could not be collected:\n" + "\n".join(errors), file=sys.stderr)
        return ExitCode.FAILED
    return ExitCode.PASSED


def cmd_collect(ns: argparse.Namespace, extra: list[str]) -> int:
    """``run -- --co``: pytest's own collection listing, the selection applied; no target is contacted and nothing
    is written."""
    cmd = [sys.executable, "-m", "pytest", str(_suites_dir(ns)), "-p", "payconform.plugin", *PYTEST_FLAGS,
           *pytest_args(vars(ns), selection_only=True), *extra]
    code = subprocess.run(cmd, check=False).returncode
    if code == 5:
        print("payconform: no tests were collected or selected (check --select and the suites directory)",
              file=sys.stderr)
    return from_pytest(code)


def default_max_duration(target: Target, tier_name: str | None) -> float:
    """The run's default time budget: twice the floor of the requests the tier plans with the target's keys
    (a run paced at the limits takes about the floor), plus 10 minutes for start-up and waits on the spec's
    clocks, and `REAL_TIME_WAITS` more without an operator (no clock: the tests wait out the sandbox's
    timelines); a stuck target ends within it, a slow one finishes."""
    pace = Pace.of(target)
    floor = estimate(tier(tier_name).planned(pace), pace.keys, target.rate_limit, target.ip_rate_limit)
    clockless = target.operator_config.get("adapter") in (None, "none")
    return 2 * floor + 600.0 + (REAL_TIME_WAITS if clockless else 0.0)


def default_workers(target: Target, tier_name: str | None = None) -> str:
    """The run's xdist workers when ``-n`` is not given: more (``options.POOL_WORKERS``) with a key pool, in
    the smoke tier, and without an operator. Then many tests wait on the spec's clocks in real time
    (settlement, a bank return, a delivery), each holding a worker meanwhile, while the others' requests keep
    the key's minute spent (`benchmarks/run_cost.py` measures the wall time against the floor). The smoke
    tier without an operator is mostly such waits: more still (``options.REAL_TIME_SMOKE_WORKERS``). A full run
    gains little from them and each worker registers its own sandbox endpoint and payment link."""
    real_time = (target.operator_config or {}).get("adapter") in (None, "none")
    smoke = tier(tier_name).name == "smoke"
    if smoke and real_time:
        return REAL_TIME_SMOKE_WORKERS
    return POOL_WORKERS if Pace.of(target).keys > 1 or smoke or real_time else DEFAULT_WORKERS


def _paced_preflight_blocks(target: Target, pacing_db: str) -> bool:
    """The preflight, paced and recorded in the run's pacing file (the pytest run spends what is left of the
    limits, the whole of them, so nothing it sends may go unrecorded)."""
    from ..contract import run_contract

    run = RunContext(pacer=pacing.for_target(pacing_db, target, run_contract().limits.get("rate_limits") or []))
    try:
        return preflight_blocks(target, run)
    finally:
        run.close()


def pytest_command(ns: argparse.Namespace, suites: Path, target_file: Path, report_dir: Path, workers: str,
                   max_duration: float | None) -> list[str]:
    """The pytest run of ``payconform run``: the forwarded options (``payconform.options``) as given, but for
    the target file, the report directory and the time left of ``--max-duration`` (None: no limit), which
    the run settles first; the user's pytest arguments go after it."""
    given = {**vars(ns), "target": str(target_file), "report_dir": str(report_dir),
             "max_duration": None if max_duration is None else f"{max_duration:.1f}"}
    cmd = [sys.executable, "-m", "pytest", str(suites), "-p", "payconform.plugin", *pytest_args(given),
           f"--junitxml={report_dir / 'junit.xml'}", f"--alluredir={report_dir / 'allure-results'}",
           *RUN_FLAGS, "-o", f"cache_dir={Path.cwd() / CACHE_DIR}", "-rfE"]
    if workers not in ("0", ""):
        # loadgroup: tests sharing an xdist_group (e.g. the rate_limit_key tests) never run concurrently
        cmd += ["-n", workers, "--dist", "loadgroup"]
    return cmd


def cmd_run(ns: argparse.Namespace, extra: list[str]) -> int:
    """Run pytest over the suites in a subprocess and answer the run's exit code (``exit_codes.ExitCode``)."""
    started = time.monotonic()
    if ns.list:
        return cmd_list(ns, extra)
    if any(a in COLLECT_ONLY for a in extra):
        return cmd_collect(ns, extra)
    if ns.baseline:
        from ..results.baseline import BaselineError, load

        try:
            load(ns.baseline)
        except BaselineError as exc:
            print(f"payconform: {exc}", file=sys.stderr)
            return ExitCode.CANNOT_TEST
    suites = _suites_dir(ns)
    if not suites.is_dir():
        print(f"payconform: no suites directory at {suites}", file=sys.stderr)
        return ExitCode.CANNOT_TEST
    tmpdir = tempfile.mkdtemp(prefix="payconform-run-")
    os.chmod(tmpdir, 0o700)
    server = None
    try:
        with stoppable():
            started_target = _start_target(ns)
            if isinstance(started_target, int):
                return started_target
            server, target = started_target
            return _run(ns, extra, suites, target, server is not None, Path(tmpdir), started)
    except Stopped as stop:
        print(f"payconform: {stop}: stopped before the tests started", file=sys.stderr)
        return signalled(stop.signum)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(tmpdir, ignore_errors=True)  # the target file, the pacing file and its write-ahead log


def _start_target(ns: argparse.Namespace) -> tuple[object, Target] | int:
    """The target of the file and flags, or the embedded reference server started (and the server, else None);
    ``ExitCode.CANNOT_TEST`` with one message when there is none to test."""
    overrides = flag_overrides(lambda name: getattr(ns, name, None))
    if ns.target or ns.base_url:
        try:
            target = Target.load(ns.target, overrides=overrides)
        except TargetConfigError as exc:
            print(f"payconform: {exc}", file=sys.stderr)
            return ExitCode.CANNOT_TEST
        if ns.mutant:
            print("payconform: --mutant only applies to the embedded reference server", file=sys.stderr)
            return ExitCode.CANNOT_TEST
        return None, target
    if any(k not in ("rate_limit", *WEBHOOK_FLAGS) for k in overrides):
        print("payconform: target flags need --target or --base-url", file=sys.stderr)
        return ExitCode.CANNOT_TEST
    print("payconform: no target given: starting the reference server", file=sys.stderr)
    try:
        server, target = start_reference("127.0.0.1", 0, None, ns.mutant, None)
    except Exception as exc:  # noqa: BLE001 - report any startup failure plainly
        print(f"payconform: cannot start the reference server: {exc}", file=sys.stderr)
        return ExitCode.CANNOT_TEST
    if "rate_limit" in overrides:
        target.rate_limit = int(overrides["rate_limit"])
    target.webhooks.update({WEBHOOK_FLAGS[k]: v for k, v in overrides.items() if k in WEBHOOK_FLAGS})
    print(f"payconform: reference server at {target.base_url}", file=sys.stderr)
    return server, target


def _run(ns: argparse.Namespace, extra: list[str], suites: Path, target: Target, embedded: bool, tmpdir: Path,
         started: float) -> int:
    """The preflight, then the pytest run; a report directory this run made and left without a report (nothing
    selected, pytest refused its arguments, stopped before anything was written) is removed."""
    # a target of the user's: its pacing file outlives the run (the next run knows what this one sent)
    pacing_db = os.environ.get(pacing.ENV_VAR) or str(run_db_path(None if embedded else target.base_url, tmpdir))
    if _paced_preflight_blocks(target, pacing_db):
        return ExitCode.CANNOT_TEST
    # after the preflight: its counts are handed over in the environment
    env = dict(os.environ, **{pacing.ENV_VAR: pacing_db,
                              STARTED_VAR: repr(time.time() - (time.monotonic() - started))})
    env.setdefault(HYPOTHESIS_DIR, str(_cache_dir() / "hypothesis"))  # beside pytest's cache, not ./.hypothesis
    target_file = tmpdir / "target.yaml"
    target.dump(target_file)
    report_dir = Path(ns.report_dir) if ns.report_dir else _default_report_dir()
    made = not report_dir.exists()
    workers = str(ns.workers if ns.workers is not None else default_workers(target, ns.tier))
    max_duration = default_max_duration(target, ns.tier) if ns.max_duration is None else ns.max_duration
    left = max(max_duration - (time.monotonic() - started), 1.0) if max_duration else None
    stop_after = None if left is None else left + HARD_STOP_GRACE
    ended = run_pytest(pytest_command(ns, suites, target_file, report_dir, workers, left) + extra, stop_after, env)
    if made and report_dir.is_dir() and (ended.code in (ExitCode.USAGE, 5)
                                         or not any(p.is_file() for p in report_dir.rglob("*"))):
        shutil.rmtree(report_dir, ignore_errors=True)
    try:
        return settle(ns, report_dir, target, ended)
    except Stopped as stop:
        print(f"payconform: {stop}: stopped while judging the finished run", file=sys.stderr)
        return signalled(stop.signum)
