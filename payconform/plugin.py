"""The payconform pytest plugin (entry point ``payconform.plugin``).

Options (group "payconform"): ``--target FILE``, ``--base-url``, ``--org-id``, ``--other-org-id``, one
flag per credential (``--api-key``, ``--read-only-key``, ...), ``--operator-url``, ``--operator-token``,
``--rate-limit``, ``--run-slow``, ``--select EXPR``, ``--report-dir DIR``, ``--payconform-embedded``,
``--fuzz-budget N`` and ``--fuzz-max-requests N`` (read by ``payconform.fuzz``).

The plugin is active for tests under a ``suites/`` directory, and for every test when a target is
given. Inactive, it changes nothing (the project's own ``tests/`` are unaffected).

Fixtures: ``target``, ``contract`` (session); ``api``, ``api_as``, ``anon``, ``operator``, ``clock``,
``fresh_org``, ``unique`` (function). Markers: ``req(*ids)`` (required on every conformance test),
``needs(*what)``.

Results: each worker attaches a JSON blob to its test reports (``report.user_properties``, name
``payconform``); the controller turns them into ``results.json`` and ``index.html`` in the report dir
and prints a summary.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets as _secrets
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from . import contract as _contract
from . import pacing as _pacing
from . import paths as _paths
from . import redact as _redact
from . import results as _results
from . import webhooks as _webhooks
from .client import Api, TargetError
from .expect import ContractViolation
from .operator import DEFAULT_FEATURES, OPERATIONS, Clock, OrgHandle, load_operator
from .report import write_report
from .target import CREDENTIAL_NAMES, Target, TargetConfigError, option_name

BLOB = "payconform"
WORKER_TARGET = "payconform_target_file"
WORKER_PACING = "payconform_pacing_db"
WORKER_LOADGROUP = "payconform_loadgroup"
DEFAULT_TIMEOUT = 120
FUZZ_SEED = 20240601  # the fuzz phase's default seed: the same run generates the same cases
NO_TARGET = (
    "payconform: no target. Pass --target FILE (see docs/architecture.md, 'The target file'), "
    "--base-url URL with --org-id and credentials, or --payconform-embedded to start the reference server; "
    "or use `payconform run`."
)

STATE = pytest.StashKey["PayconformState"]()
RECORD = pytest.StashKey[_results.TestRecord]()
RECORD_TOKEN = pytest.StashKey[Any]()


# ---------------------------------------------------------------------------------------------
# options and markers
# ---------------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("payconform", "payconform: contract conformance run against a target")
    g.addoption("--target", dest="payconform_target", metavar="FILE", default=None,
                help="target file (YAML or JSON): base_url, org ids, credentials, operator, profile, rate limits")
    g.addoption("--base-url", dest="payconform_base_url", metavar="URL", default=None,
                help="target base URL including /business/api/v1 (overrides the target file)")
    g.addoption("--org-id", dest="payconform_org_id", metavar="ID", default=None,
                help="organization id the api keys belong to")
    g.addoption("--other-org-id", dest="payconform_other_org_id", metavar="ID", default=None,
                help="an organization the api keys cannot access (for FORBIDDEN)")
    for name in CREDENTIAL_NAMES:
        what = "comma-separated equivalent read+write test keys" if name == "api_key_pool" else name.replace("_", " ")
        g.addoption(option_name(name), dest=f"payconform_cred_{name}", metavar="VALUE", default=None,
                    help=f"credential {name} ({what}); env:NAME reads it from the environment")
    g.addoption("--operator-url", dest="payconform_operator_url", metavar="URL", default=None,
                help="operator API of the reference server (http://host:port/_operator)")
    g.addoption("--operator-token", dest="payconform_operator_token", metavar="TOKEN", default=None,
                help="x-operator-token for the operator API")
    g.addoption("--rate-limit", dest="payconform_rate_limit", metavar="N", type=int, default=None,
                help="requests per minute per credential the run must stay under (default 100)")
    g.addoption("--run-slow", dest="payconform_run_slow", action="store_true", default=False,
                help="run tests that wait in real time (needs real_time)")
    g.addoption("--select", dest="payconform_select", metavar="EXPR", default=None,
                help="comma-separated requirement id globs (IDEM-*) or part slugs (authentication); "
                     "deselects the other conformance tests")
    g.addoption("--report-dir", dest="payconform_report_dir", metavar="DIR", default=None,
                help="where results.json and index.html go (default reports/<UTC timestamp>)")
    g.addoption("--payconform-embedded", dest="payconform_embedded", action="store_true", default=False,
                help="start the reference server, provision an organization and credentials, run against it")
    g.addoption("--payconform-mutant", dest="payconform_mutant", metavar="NAME", default=None,
                help="with --payconform-embedded: start the reference server with this mutant")
    # read by payconform.fuzz (suites/fuzz); defaults in suites/fuzz/fuzz.yaml
    g.addoption("--fuzz-budget", dest="payconform_fuzz_budget", metavar="N", type=int, default=None,
                help="fuzz phase: generated requests per operation (default 5); deeper runs cost more requests")
    g.addoption("--fuzz-max-requests", dest="payconform_fuzz_max_requests", metavar="N", type=int, default=None,
                help="fuzz phase: at most N requests in all (split evenly over the xdist workers); the rest of the "
                     "fuzz phase is skipped")
    g.addoption("--fuzz-seed", dest="payconform_fuzz_seed", metavar="N", type=int, default=FUZZ_SEED,
                help=f"fuzz phase: seed of the generated cases (default {FUZZ_SEED}); the same seed, budget and "
                     "target state generate the same cases")


def _overrides(config: pytest.Config) -> dict[str, Any]:
    o: dict[str, Any] = {
        "base_url": config.getoption("payconform_base_url"),
        "org_id": config.getoption("payconform_org_id"),
        "other_org_id": config.getoption("payconform_other_org_id"),
        "operator_url": config.getoption("payconform_operator_url"),
        "operator_token": config.getoption("payconform_operator_token"),
        "rate_limit": config.getoption("payconform_rate_limit"),
    }
    for name in CREDENTIAL_NAMES:
        o[name] = config.getoption(f"payconform_cred_{name}")
    return {k: v for k, v in o.items() if v is not None}


# ---------------------------------------------------------------------------------------------
# state
# ---------------------------------------------------------------------------------------------


class PayconformState:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.explicit = bool(
            config.getoption("payconform_target")
            or config.getoption("payconform_base_url")
            or config.getoption("payconform_embedded")
            or (self.is_worker and config.workerinput.get(WORKER_TARGET))
        )
        self.target: Target | None = None
        self.contract: _contract.Contract | None = None
        self.redactor = _redact.default()
        self.pacer: Any = None
        self.server: Any = None
        self.collector = _results.ResultCollector()
        self.started = datetime.now(timezone.utc)
        self.report_dir: Path | None = None
        self.written: dict[str, Path] = {}
        self._operator: Any = None
        self._operator_loaded = False
        self._tmpdir: str | None = None
        self._own_pacing = False
        self.run_slow = bool(config.getoption("payconform_run_slow"))
        sel = config.getoption("payconform_select")
        self.select = [s.strip() for s in sel.split(",") if s.strip()] if sel else []
        self.suite_items = 0
        self.target_file: Path | None = None
        self.loadgroup = False
        self.results: dict | None = None

    # operator -----------------------------------------------------------------------------------

    def operator(self) -> Any:
        if not self._operator_loaded:
            self._operator_loaded = True
            if self.target is not None:
                self._operator = load_operator(self.target)
        return self._operator

    def make_api(self, credential: str | None, **kw: Any) -> Api:
        assert self.target is not None
        return Api(self.target, credential, contract=self.contract, pacer=self.pacer, redactor=self.redactor, **kw)

    def tmpdir(self) -> str:
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="payconform-")
            os.chmod(self._tmpdir, 0o700)
        return self._tmpdir

    def cleanup(self) -> None:
        if self.pacer is not None:
            try:
                self.pacer.close()
            except Exception:
                pass
        if self.server is not None:
            self.server.stop()
            self.server = None
        op = self._operator
        if op is not None and hasattr(op, "close"):
            try:
                op.close()
            except Exception:
                pass
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def _state(config: pytest.Config) -> PayconformState:
    return config.stash[STATE]


def _is_suite_path(path: Path, config: pytest.Config) -> bool:
    """Whether a test file is a conformance test: below a ``suites/`` directory (inside the rootdir)."""
    path = Path(path)
    try:
        parts = path.relative_to(config.rootpath).parts
    except ValueError:
        parts = path.parts
    if "suites" in parts[:-1]:
        return True
    try:
        path.relative_to(_paths.suites_dir())
        return True
    except ValueError:
        return False


def _active_for(item: pytest.Item) -> bool:
    state = _state(item.config)
    return state.explicit or _is_suite_path(item.path, item.config)


def _req_ids(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers("req"):
        for arg in mark.args:
            for rid in arg if isinstance(arg, (list, tuple)) else [arg]:
                if str(rid) not in ids:
                    ids.append(str(rid))
    return ids


def _needs(item: pytest.Item) -> list[str]:
    out: list[str] = []
    for mark in item.iter_markers("needs"):
        for arg in mark.args:
            for n in arg if isinstance(arg, (list, tuple)) else [arg]:
                if str(n) not in out:
                    out.append(str(n))
    return out


# ---------------------------------------------------------------------------------------------
# configure / unconfigure
# ---------------------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "req(*ids): requirement ids from contract/requirements.yaml that this test checks")
    config.addinivalue_line("markers", "needs(*what): what the test needs beyond the api key "
                                       "(operator, clock, real_time, read_only_key, ...)")
    state = PayconformState(config)
    config.stash[STATE] = state
    if not state.is_worker:
        config.pluginmanager.register(_ResultListener(state), "payconform-results")
    try:
        _configure(state)
    except (TargetConfigError, _contract.ContractError) as exc:
        state.cleanup()
        raise pytest.UsageError(str(exc)) from None


def _configure(state: PayconformState) -> None:
    config = state.config
    if state.is_worker:
        path = config.workerinput.get(WORKER_TARGET)
        if path:
            state.target = Target.load(path)
    elif config.getoption("payconform_embedded"):
        state.target = _start_embedded(state)
    elif config.getoption("payconform_target") or config.getoption("payconform_base_url"):
        state.target = Target.load(config.getoption("payconform_target"), overrides=_overrides(config))
    elif any(v is not None for v in _overrides(config).values()):
        raise TargetConfigError("payconform: target flags were given without --target or --base-url")

    target = state.target
    if target is not None:
        state.redactor.add(*target.secrets())
    state.contract = _contract.Contract.load(profile_overrides=target.profile if target else None)
    _contract.set_current(state.contract)

    if target is not None:
        if state.is_worker:
            db = config.workerinput.get(WORKER_PACING)
        else:
            db = os.environ.get(_pacing.ENV_VAR)
            if not db:
                db = str(_pacing.new_db_path(state.tmpdir()))
                state._own_pacing = True
        pool_exempt = [target.credential("rate_limit_key")] if target.credential("rate_limit_key") else []
        state.pacer = _pacing.Pacer(db, target.rate_limit, target.ip_rate_limit, exempt=pool_exempt,
                                    routes=_pacing.route_limits(state.contract.limits.get("rate_limits") or []))
        _pacing.set_current(state.pacer)
        if not state.is_worker:
            # the file workers load (overrides applied, env: references kept as references)
            state.target_file = target.dump(Path(state.tmpdir()) / "target.yaml")

    if not state.is_worker and target is not None and getattr(config.option, "dist", None) == "load":
        # honour xdist_group markers (tests that must not run concurrently) without --dist loadgroup
        config.option.dist = "loadgroup"
        state.loadgroup = True
    if state.is_worker and config.workerinput.get(WORKER_LOADGROUP):
        config.option.loadgroup = True  # workers parse their own args: tell them, as --dist loadgroup would

    if not state.is_worker:
        opt = config.getoption("payconform_report_dir")
        if opt:
            state.report_dir = Path(opt)
        else:
            stamp = state.started.strftime("%Y%m%dT%H%M%SZ")
            state.report_dir = Path(config.invocation_params.dir) / "reports" / stamp


def _start_embedded(state: PayconformState) -> Target:
    from .provision import provision_reference
    from .refserver import RefServer, RefServerError

    config = state.config
    server = RefServer(mutant=config.getoption("payconform_mutant"))
    try:
        server.start()
    except RefServerError as exc:
        raise TargetConfigError(f"payconform --payconform-embedded: {exc}") from None
    state.server = server
    state.redactor.add(server.operator_token)
    return provision_reference(server, rate_limit=_overrides(config).get("rate_limit", 100))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: hand the target file and the pacing database to each worker."""
    state = _state(node.config)
    if state.target is not None:
        node.workerinput[WORKER_TARGET] = str(state.target_file)
        node.workerinput[WORKER_PACING] = state.pacer.path
    if state.loadgroup:
        node.workerinput[WORKER_LOADGROUP] = True


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    state.cleanup()
    listener = config.pluginmanager.get_plugin("payconform-results")
    if listener is not None:
        config.pluginmanager.unregister(listener)
    if _contract.current() is state.contract:
        _contract.set_current(None)
    if _pacing.current() is state.pacer:
        _pacing.set_current(None)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(STATE, None)
    if state is None or state.target is None:
        return None
    lines = [f"payconform target: {state.redactor.redact(state.target.base_url)} (org {state.target.org_id})"]
    if state.contract is not None:
        lines.append(f"payconform contract: {state.contract.version}, {len(state.contract.requirements)} requirements")
    lines.append(f"payconform fuzz seed: {config.getoption('payconform_fuzz_seed')} (--fuzz-seed reproduces it)")
    return lines


# ---------------------------------------------------------------------------------------------
# collection
# ---------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    rep = yield
    if not rep.passed or not rep.result:
        return rep
    items = [i for i in rep.result if isinstance(i, pytest.Item) and _is_suite_path(i.path, collector.config)]
    if not items:
        return rep
    contract = _state(collector.config).contract
    known = contract.requirements if contract is not None else {}
    problems: list[str] = []
    for item in items:
        ids = _req_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: no @pytest.mark.req(...) marker; every conformance test names "
                            "the requirement(s) it checks")
        elif known:
            for rid in ids:
                if rid not in known:
                    problems.append(f"{item.nodeid}: unknown requirement id {rid!r} "
                                    "(not in contract/requirements.yaml)")
    if problems:
        rep.outcome = "failed"
        rep.longrepr = "payconform: invalid conformance tests:\n" + "\n".join(f"  {p}" for p in problems)
        rep.result = []
    return rep


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = _state(config)
    suite = [i for i in items if _is_suite_path(i.path, config)]
    state.suite_items = len(suite)
    if state.select:
        keep, drop = [], []
        for item in items:
            if not _is_suite_path(item.path, config):
                keep.append(item)
                continue
            contract = state.contract or _contract.Contract()
            if contract.matches(_req_ids(item), state.select, extra_parts=[item.path.parent.name]):
                keep.append(item)
            else:
                drop.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    # default per-test timeout for conformance tests when the user gave none
    if config.pluginmanager.hasplugin("timeout") and getattr(config, "_env_timeout", None) is None:
        for item in items:
            if _active_for(item) and item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(DEFAULT_TIMEOUT))


# ---------------------------------------------------------------------------------------------
# running a test
# ---------------------------------------------------------------------------------------------


def _requirement_info(contract: _contract.Contract | None, ids: list[str]) -> list[dict]:
    out = []
    for rid in ids:
        r = (contract.requirements.get(rid) if contract is not None else None) or {}
        out.append({
            "id": rid,
            "part": r.get("part"),
            "part_title": contract.part_title(r.get("part")) if (contract is not None and r.get("part")) else None,
            "section": r.get("section"),
            "quote": r.get("quote"),
        })
    return out


def _clean_nodeid(item: pytest.Item) -> str:
    """The node id without the ``@group`` suffix xdist's loadgroup mode appends."""
    nodeid = item.nodeid
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        name = mark.args[0] if mark.args else mark.kwargs.get("name")
        if name and nodeid.endswith(f"@{name}"):
            nodeid = nodeid[: -len(name) - 1]
    return nodeid


def _ensure_record(item: pytest.Item) -> _results.TestRecord:
    rec = item.stash.get(RECORD, None)
    if rec is None:
        ids = _req_ids(item)
        rec = _results.TestRecord(nodeid=_clean_nodeid(item), requirements=ids,
                                  requirement_info=_requirement_info(_state(item.config).contract, ids),
                                  needs=_needs(item))
        item.stash[RECORD] = rec
    return rec


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _active_for(item):
        return
    state = _state(item.config)
    rec = _ensure_record(item)
    item.stash[RECORD_TOKEN] = _results.use_record(rec)
    if state.target is None:
        pytest.fail(NO_TARGET, pytrace=False)
    target = state.target
    for need in rec.needs:
        if need == "operator":
            if state.operator() is None:
                pytest.skip("needs operator")
        elif need == "clock":
            op = state.operator()
            if op is None or "advance_clock" not in getattr(op, "capabilities", set()):
                pytest.skip("needs clock")
        elif need == "real_time":
            if not state.run_slow:
                pytest.skip("needs --run-slow (real time)")
        elif need in CREDENTIAL_NAMES:
            if not target.has(need):
                pytest.skip(f"needs {need}")
        elif need == "signing_key":
            if not (target.has("signing_key_id") and target.has("signing_private_key")):
                pytest.skip("needs signing_key")
        elif need == "second_org":
            if not target.other_org_id:
                pytest.skip("needs second_org")
        # other needs (profile, webhook_receiver, isolation, ...) are informational here


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem) -> None:
    token = item.stash.get(RECORD_TOKEN, None)
    if token is not None:
        _results.reset_record(token)
        del item.stash[RECORD_TOKEN]


def _failure_message(state: PayconformState, call) -> str | None:
    if call.excinfo is None:
        return None
    value = call.excinfo.value
    if isinstance(value, (ContractViolation, TargetError)):
        text = str(value)
    else:
        text = call.excinfo.exconly()
    return state.redactor.redact(text)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    rec = _ensure_record(item) if _active_for(item) else None
    if rec is not None:
        state = _state(item.config)
        failed = bool(report.failed)
        blob = rec.blob(include_transcript=failed)
        blob["nodeid"] = rec.nodeid
        if failed:
            blob["message"] = _failure_message(state, call)
        report.user_properties.append((BLOB, json.dumps(blob, default=str)))
    return report


def _skip_reason(report) -> str | None:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        reason = str(lr[2])
    elif lr is not None:
        reason = str(lr)
    else:
        return None
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


class _ResultListener:
    """Registered in the controller (or a run without xdist): turns test reports into result rows."""

    def __init__(self, state: PayconformState) -> None:
        self.state = state

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        blob = None
        props = []
        for name, value in report.user_properties:
            if name == BLOB:
                try:
                    blob = json.loads(value)
                except (TypeError, ValueError):
                    blob = None
            else:
                props.append((name, value))
        if blob is None:
            return
        if blob.get("requirements"):
            props.append(("requirements", ",".join(blob["requirements"])))
        report.user_properties = props  # keep the big blob out of junit xml
        self.state.collector.add(
            nodeid=blob.get("nodeid") or report.nodeid,
            when=report.when,
            outcome=report.outcome,
            duration=getattr(report, "duration", 0.0) or 0.0,
            blob=blob,
            skip_reason=_skip_reason(report) if report.skipped else None,
            message=blob.get("message"),
            wasxfail=hasattr(report, "wasxfail"),
        )


# ---------------------------------------------------------------------------------------------
# session end: results.json, index.html, summary
# ---------------------------------------------------------------------------------------------


def _results_data(state: PayconformState) -> dict:
    finished = datetime.now(timezone.utc)
    target = state.target
    args = [state.redactor.redact(a) for a in state.config.invocation_params.args]
    run = {
        "started": state.started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "target": state.redactor.redact(target.base_url) if target is not None else None,
        "org_id": target.org_id if target is not None else None,
        "contract_version": state.contract.version if state.contract is not None else "unknown",
        "pytest_args": args,
        "run_slow": state.run_slow,
        "select": state.select,
    }
    return _results.build_results(run=run, tests=state.collector.tests(), contract=state.contract)


def pytest_sessionfinish(session: pytest.Session, exitstatus) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None or state.is_worker:
        return
    if not (state.explicit or state.collector.rows):
        return
    if state.report_dir is None:
        return
    data = _results_data(state)
    data = state.redactor.obj(data)
    state.results = data
    state.written["results"] = _results.write_json(state.report_dir / "results.json", data)
    state.written["html"] = write_report(state.report_dir, data, state.contract, state.redactor)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or state.is_worker or state.results is None:
        return
    data = state.results
    tr = terminalreporter
    tests = data["tests"]
    t = _results.totals(data)
    tr.write_sep("=", "payconform")
    skip_by: dict[str, int] = {}
    for row in tests:
        if row["outcome"] == "skipped":
            label = {"needs_operator": "needs operator", "needs_clock": "needs clock",
                     "needs_slow": "needs --run-slow"}.get(row["verdict"], row.get("skip_reason") or "skipped")
            skip_by[label] = skip_by.get(label, 0) + 1
    skipped = ", ".join(f"{k}: {v}" for k, v in sorted(skip_by.items(), key=lambda kv: (-kv[1], kv[0])))
    tr.write_line(f"tests: {t['passed']} passed, {t['failed'] + t['errors']} failed, {t['skipped']} skipped"
                  + (f" ({skipped})" if skipped else ""))
    tr.write_line(f"requirements covered: {t['covered']} of {t['requirements']}")
    failed = [r for r in tests if r["verdict"] == "failed"]
    if failed:
        tr.write_line("failed:")
        for row in failed:
            lines = [ln for ln in (row.get("message") or "").splitlines() if ln.strip()]
            first = next((ln for ln in lines if not ln.startswith("[")), lines[0] if lines else "")
            reqs = ", ".join(row["requirements"]) or "-"
            tr.write_line(f"  {config.cwd_relative_nodeid(row['nodeid'])} [{reqs}]: {first.strip()}", red=True)
    if "html" in state.written:
        tr.write_line(f"report: {state.written['html'].resolve()}  (results.json beside it)")


# ---------------------------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------------------------


class SkippingOperator:
    """The target's operator adapter; an action the adapter cannot do skips the test."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.capabilities = set(getattr(inner, "capabilities", set()))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name in OPERATIONS and callable(attr):
            def call(*args: Any, **kwargs: Any) -> Any:
                try:
                    return attr(*args, **kwargs)
                except NotImplementedError:
                    pytest.skip(f"needs operator: cannot {name}")
            return call
        return attr

    def __repr__(self) -> str:
        return f"SkippingOperator({self._inner!r})"


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    """The target under test (``payconform.target.Target``)."""
    state = _state(request.config)
    if state.target is None:
        pytest.fail(NO_TARGET, pytrace=False)
    return state.target


@pytest.fixture(scope="session")
def contract(request: pytest.FixtureRequest) -> _contract.Contract:
    """The contract (requirements, catalogs, merged profile)."""
    state = _state(request.config)
    return state.contract if state.contract is not None else _contract.Contract.load()


@pytest.fixture
def api(request: pytest.FixtureRequest, target: Target):
    """``Api`` bound to one key of the pool (the least used) for the whole test."""
    state = _state(request.config)
    pool = target.pool
    if not pool:
        pytest.skip("needs api_key")
    client = state.make_api(state.pacer.least_loaded(pool))
    yield client
    client.close()


@pytest.fixture
def api_as(request: pytest.FixtureRequest, target: Target):
    """Factory: ``api_as("read_only_key")`` -> ``Api`` with that credential (skips when absent)."""
    state = _state(request.config)
    made: list[Api] = []

    def factory(name: str, **kw: Any) -> Api:
        value = target.credential(name)
        if name == "api_key" and not value:
            value = target.pool[0] if target.pool else None
        if not value:
            pytest.skip(f"needs {name}")
        if isinstance(value, list):
            value = state.pacer.least_loaded(value)
        client = state.make_api(value, **kw)
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def anon(request: pytest.FixtureRequest, target: Target):
    """``Api`` that sends no credential."""
    client = _state(request.config).make_api(None)
    yield client
    client.close()


@pytest.fixture
def operator(request: pytest.FixtureRequest, target: Target):
    """The operator adapter (skips with ``needs operator`` when the target has none)."""
    op = _state(request.config).operator()
    if op is None:
        pytest.skip("needs operator")
    return SkippingOperator(op)


@pytest.fixture
def clock(request: pytest.FixtureRequest, target: Target) -> Clock:
    """``clock.advance(org_id, seconds)`` (or ``clock.advance(seconds)`` for the target's organization)."""
    op = _state(request.config).operator()
    if op is None or "advance_clock" not in getattr(op, "capabilities", set()):
        pytest.skip("needs clock")
    return Clock(SkippingOperator(op), target.org_id)


@pytest.fixture
def fresh_org(request: pytest.FixtureRequest, target: Target):
    """Factory: ``fresh_org(verified=True, payments_enabled=True, suspended=False, features=..., scopes=...,
    paced=True)`` -> OrgHandle. ``paced=False`` is for tests that trip the organization's rate limit on purpose."""
    state = _state(request.config)
    inner = state.operator()
    if inner is None:
        pytest.skip("needs operator")
    op = SkippingOperator(inner)
    made: list[Api] = []

    def factory(verified: bool = True, payments_enabled: bool = True, suspended: bool = False,
                features: Any = DEFAULT_FEATURES, scopes: Any = ("read", "write"), paced: bool = True) -> OrgHandle:
        org_id = op.create_org(verified=verified, payments_enabled=payments_enabled, suspended=False,
                               features=list(features))
        key = op.issue_key(org_id, mode="test", scopes=list(scopes))["key"]
        state.redactor.add(key)
        if not paced and state.pacer is not None:
            state.pacer.exempt_credential(key)
        if suspended:
            op.update_org(org_id, suspended=True)

        def issue_key(**kw: Any) -> str:
            data = op.issue_key(org_id, **kw)
            state.redactor.add(data["key"])
            return data["key"]

        client = state.make_api(key, org_id=org_id, other_org_id=target.org_id)
        made.append(client)
        return OrgHandle(org_id, client, issue_key, key)

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def unique(request: pytest.FixtureRequest):
    """``unique("prod")`` -> ``prod-<test hash>-<random>``, short and unique per call."""
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:6]

    def make(prefix: str = "pc") -> str:
        return f"{prefix}-{digest}-{_secrets.token_hex(4)}"

    return make


@pytest.fixture(scope="session")
def webhook_server(target: Target):
    """The loopback webhook receiver of this process (``payconform.webhooks.Receiver``), on the target file's
    ``webhooks.listen`` address, advertising ``webhooks.public_url`` when given."""
    receiver = _webhooks.Receiver(*_webhooks.receiver_settings(target.webhooks))
    yield receiver
    receiver.close()


@pytest.fixture
def webhook_receiver(webhook_server) -> _webhooks.Mailbox:
    """A fresh mailbox of the receiver for this test: ``.url`` to register, ``.snapshot()`` of the raw
    deliveries, ``.fail_next(n, status)`` / ``.answer(status, delay)`` to script it, ``.wait_for(...)``."""
    return webhook_server.mailbox()


@pytest.fixture
def webhook_receiver_factory(webhook_server):
    """Factory for more mailboxes in one test: ``webhook_receiver_factory() -> Mailbox``."""
    return webhook_server.mailbox

