"""Result collection: each test's record (requirements, request ids, transcript) and its way to the controller.

A worker attaches the record to its test reports as a JSON blob (``report.user_properties``, name
``payconform``): xdist carries user properties to the controller, where ``ResultListener`` turns them into
result rows and removes the blob before JUnit XML sees it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..pacing import accounting
from .. import contract as _contract
from ..results import records as _results
from ..results.mismatch import ProfileMismatch
from ..client import TargetError
from ..checks.expect import ContractViolation
from .markers import active_for, needs, requirement_ids
from .session import PayconformState, get_state

BLOB = "payconform"
LISTENER = "payconform-results"
RECORD = pytest.StashKey[_results.TestRecord]()
RECORD_TOKEN = pytest.StashKey[Any]()
WORKER_REQUESTS = "payconform_requests"


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
        ids = requirement_ids(item)
        rec = _results.TestRecord(nodeid=_clean_nodeid(item), requirements=ids,
                                  requirement_info=_requirement_info(get_state(item.config).contract, ids),
                                  needs=needs(item))
        item.stash[RECORD] = rec
    return rec


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """The controller (or a run without xdist) collects the rows; workers only send them."""
    state = get_state(config)
    if not state.is_worker:
        config.pluginmanager.register(ResultListener(state), LISTENER)


def pytest_unconfigure(config: pytest.Config) -> None:
    listener = config.pluginmanager.get_plugin(LISTENER)
    if listener is not None:
        config.pluginmanager.unregister(listener)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Make the test's record current before its fixtures run: the requests they send are its evidence."""
    if active_for(item):
        item.stash[RECORD_TOKEN] = _results.use_record(_ensure_record(item))


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


def _mismatch_longrepr(report: pytest.TestReport, call) -> None:
    """A ``ProfileMismatch``'s reason as pytest shows a skip's (``Skipped: <reason>``), so the terminal, JUnit
    and results.json carry the mismatch record and not the exception's class name."""
    if report.skipped and call.excinfo is not None and isinstance(call.excinfo.value, ProfileMismatch) \
            and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, _ = report.longrepr
        report.longrepr = (path, line, f"Skipped: {call.excinfo.value.msg}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    report = yield
    _mismatch_longrepr(report, call)
    rec = _ensure_record(item) if active_for(item) else None
    if rec is not None:
        state = get_state(item.config)
        failed = bool(report.failed)
        blob = rec.blob(include_transcript=failed)
        blob["nodeid"] = rec.nodeid
        requests = accounting.take(rec.nodeid)  # what the test sent since its last report
        if requests:
            blob["requests"] = requests
        if failed:
            blob["message"] = _failure_message(state, call)
            _redact_longrepr(state, report)
        report.user_properties.append((BLOB, json.dumps(blob, default=str)))
    return report


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands what it sent outside tests (after the session's teardowns) to the controller."""
    if get_state(session.config).is_worker:
        session.config.workeroutput[WORKER_REQUESTS] = accounting.take_all()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist controller: a worker's counts from outside its tests."""
    get_state(node.config).counts.add_all(getattr(node, "workeroutput", {}).get(WORKER_REQUESTS))


def _redact_longrepr(state: PayconformState, report: pytest.TestReport) -> None:
    """The traceback as text without secrets when a frame outside the harness (schemathesis' ``Case.call``,
    whose case carries the key header) shows them; the console, JUnit and allure all print ``longrepr``."""
    text = str(report.longrepr)
    clean = state.redactor.redact(text)
    if clean != text:
        report.longrepr = clean


def _skip_reason(report) -> str | None:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        reason = str(lr[2])
    elif lr is not None:
        reason = str(lr)
    else:
        return None
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


class ResultListener:
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
        self.state.counts.add(blob.get("nodeid") or report.nodeid, blob.get("requests"))
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
