"""The run's session state: the target, its contract, pacer, operator and embedded server, in one object.

Created at configure time in every process, with the process's ``payconform.run.Run`` (``state.run``), which
the fixtures and every transport of the process are handed. The xdist controller loads (or starts) the
target and hands workers the target file and the pacing database, so every process paces against the same
budget.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ..pacing import accounting
from .. import contract as _contract
from ..pacing import pacer as _pacing
from .. import redact as _redact
from ..results import records as _results
from ..pacing import tiers as _tiers
from ..pacing.cost import run_started
from ..operator import load_operator
from ..pacing.files import run_db_path
from ..profile.resolve import fold_document
from ..run import RUN, Run
from ..target import Target, TargetConfigError
from .options import base_url, target_overrides

STATE = pytest.StashKey["PayconformState"]()
WORKER_TARGET = "payconform_target_file"
WORKER_PACING = "payconform_pacing_db"
WORKER_LOADGROUP = "payconform_loadgroup"
NO_TARGET = (
    "payconform: no target. Pass --target FILE (see docs/architecture.md, 'The target file'), "
    "--base-url URL with --org-id and credentials, or --payconform-embedded to start the reference server; "
    "or use `payconform run`."
)


class PayconformState:
    """What one pytest process knows about the run; ``cleanup`` releases what it started."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.explicit = bool(
            config.getoption("payconform_target")
            or base_url(config)
            or config.getoption("payconform_embedded")
            or (self.is_worker and config.workerinput.get(WORKER_TARGET))
        )
        self.target: Target | None = None
        self.contract: _contract.Contract | None = None
        self.redactor = _redact.default()
        self.pacer: Any = None
        self.server: Any = None
        self.collector = _results.ResultCollector()
        self.counts = accounting.RunCounts()
        self.started = run_started()
        self.report_dir: Path | None = None
        self.written: dict[str, Path] = {}
        self._operator: Any = None
        self._operator_loaded = False
        self._tmpdir: str | None = None
        self.tier = _tiers.tier(config.getoption("payconform_tier", default=None))
        self.run_slow = bool(config.getoption("payconform_run_slow")) or self.tier.run_slow
        sel = config.getoption("payconform_select")
        self.select = [s.strip() for s in sel.split(",") if s.strip()] if sel else []
        self.suite_items = 0
        self.target_file: Path | None = None
        self.loadgroup = False
        self.results: dict | None = None
        self.run = Run(redactor=self.redactor)

    def operator(self) -> Any:
        """The target's operator adapter, loaded on first use (None when the target has none)."""
        if not self._operator_loaded:
            self._operator_loaded = True
            if self.target is not None:
                self._operator = load_operator(self.target)
        return self._operator

    def tmpdir(self) -> str:
        """A private (0700) directory for this process, removed at cleanup."""
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="payconform-")
            os.chmod(self._tmpdir, 0o700)
        return self._tmpdir

    def cleanup(self) -> None:
        self.run.close()
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


def get_state(config: pytest.Config) -> PayconformState:
    """This process's ``PayconformState`` (set by ``pytest_configure``)."""
    return config.stash[STATE]


def pytest_configure(config: pytest.Config) -> None:
    state = PayconformState(config)
    config.stash[STATE] = state
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
    elif config.getoption("payconform_target") or base_url(config):
        state.target = Target.load(config.getoption("payconform_target"), overrides=target_overrides(config))
    elif any(v is not None for v in target_overrides(config).values()):
        raise TargetConfigError("payconform: target flags were given without --target or --base-url")

    target = state.target
    if target is not None and not state.is_worker and target.openapi:
        # once, before the workers: the target file they load carries the document's entries in its profile
        for note in fold_document(target):
            print(f"payconform: openapi: {note}", file=sys.stderr)
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
                # a target of the user's: its pacing file outlives the run (the next run knows what this one sent)
                db = str(run_db_path(None if state.server is not None else target.base_url,
                                             state.tmpdir()))
        state.pacer = _pacing.for_target(db, target, state.contract.limits.get("rate_limits") or [])
        if not state.is_worker:
            # the file workers load (overrides applied, env: references kept as references)
            state.target_file = target.dump(Path(state.tmpdir()) / "target.yaml")

    state.run = Run(target=target, contract=state.contract, pacer=state.pacer, redactor=state.redactor,
                    operator=state.operator, worker=state.is_worker)
    config.stash[RUN] = state.run

    if not state.is_worker and target is not None and getattr(config.option, "dist", None) == "load":
        # honour xdist_group markers (tests that must not run concurrently) without --dist loadgroup
        config.option.dist = "loadgroup"
        state.loadgroup = True
    if state.is_worker and config.workerinput.get(WORKER_LOADGROUP):
        config.option.loadgroup = True  # workers parse their own args: tell them, as --dist loadgroup would

    if not state.is_worker and not config.option.collectonly:  # a collection-only run writes no report
        opt = config.getoption("payconform_report_dir")
        if opt:
            state.report_dir = Path(opt)
        else:
            stamp = state.started.strftime("%Y%m%dT%H%M%SZ")
            state.report_dir = Path(config.invocation_params.dir) / "reports" / stamp


def _start_embedded(state: PayconformState) -> Target:
    from ..provision import provision_reference
    from ..refserver import RefServer, RefServerError

    config = state.config
    server = RefServer(mutant=config.getoption("payconform_mutant"))
    try:
        server.start()
    except RefServerError as exc:
        raise TargetConfigError(f"payconform --payconform-embedded: {exc}") from None
    state.server = server
    state.redactor.add(server.operator_token)
    return provision_reference(server, rate_limit=target_overrides(config).get("rate_limit", 100))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist controller: hand the target file and the pacing database to each worker."""
    state = get_state(node.config)
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
    if _contract.current() is state.contract:
        _contract.set_current(None)
