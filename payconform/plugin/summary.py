"""The end of a run: ``results.json``, ``index.html`` and ``summary.md`` in the report dir, the header and the
terminal summary.

Only the controller (or a run without xdist) writes: it holds every worker's rows.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ..pacing import accounting
from ..results import records as _results
from ..results.causes import failure_causes
from ..pacing.cost import cost_line, estimate, run_cost
from ..results.html import write_report
from ..results.markdown import headline, write_summary
from ..results.mismatch import merge, override_yaml
from ..pacing.tiers import FUZZ_MINIMUM, Pace, Tier
from ..results.verdicts import Verdict
from . import endings as _endings
from .session import STATE, PayconformState


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(STATE, None)
    if state is None or state.target is None:
        return None
    lines = [f"payconform target: {state.redactor.redact(state.target.base_url)} (org {state.target.org_id})"]
    if state.contract is not None:
        lines.append(f"payconform contract: {state.contract.version}, {len(state.contract.requirements)} requirements")
    lines.append(f"payconform fuzz seed: {config.getoption('payconform_fuzz_seed')} (--fuzz-seed reproduces it)")
    lines.append(_tier_line(state))
    return lines


def _tier_line(state: PayconformState) -> str:
    """The tier, the requests it plans with the keys at hand (the fuzz phase's share) and the least time the
    target's rate limits allow for them. With ``--select`` those are the whole tier's, which the selection
    stays under: the line says so rather than promise a selection a tier's time."""
    tier, target = state.tier, state.target
    assert target is not None
    pace = Pace.of(target)
    keys = pace.keys
    planned = planned_requests(state)
    minutes = estimate(planned, keys, target.rate_limit, target.ip_rate_limit) / 60
    whole = (f"; selected: {', '.join(state.select)}, a part of the tier: the whole tier plans about {planned}"
             if state.select else f"; planned about {planned}")
    return (f"payconform tier: {tier.describe()}{whole} requests (suites ~{tier.suite_requests}, "
            f"{_fuzz_share(state.config, tier, pace)[1]}), at least {minutes:.1f} min at {target.rate_limit} "
            f"requests/min with {keys} key{'s' if keys != 1 else ''}")


def planned_requests(state: PayconformState) -> int:
    """The requests the run's tier plans with the keys at hand: its suites' and its fuzz phase's."""
    return state.tier.suite_requests + _fuzz_share(state.config, state.tier, Pace.of(state.target))[0]


def _fuzz_share(config: pytest.Config, tier: Tier, pace: Pace) -> tuple[int, str]:
    """What the fuzz phase may send and why: the command line's cap, or the tier's default and its source."""
    if config.getoption("payconform_fuzz_budget", default=None) == 0 or not tier.fuzz_requests:
        return 0, "no fuzz phase"
    given = config.getoption("payconform_fuzz_max_requests", default=None)
    if given:
        return given, f"fuzz phase at most {given} (--fuzz-max-requests)"
    if given == 0:
        return tier.fuzz_requests, "fuzz phase without a cap (--fuzz-max-requests 0)"
    return tier.fuzz_budget(pace), (
        f"fuzz phase {tier.fuzz_budget(pace)}: what the suites leave of {tier.request_budget} requests per key at "
        f"the spec's rate or, if less, of {tier.seconds:.0f} s at {pace.per_minute()} requests/min, at least "
        f"{FUZZ_MINIMUM}, at most {tier.fuzz_requests}")


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
        "strict_profile": bool(state.config.getoption("payconform_strict_profile")),
        "tier": state.tier.name,
        "select": state.select,
        **({"ended": ended} if (ended := _endings.ended(state.config)) else {}),
    }
    data = _results.build_results(run=run, tests=state.collector.tests(), contract=state.contract)
    if target is not None and state.contract is not None:
        data["cost"] = _cost(state, data["tests"], (finished - state.started).total_seconds())
    return data


def _cost(state: PayconformState, tests: list[dict], wall: float) -> dict:
    """The run's request counts and floor (``cost``); each test row gains its ``requests``."""
    state.counts.add_all(accounting.take_all())  # this process's own (a run without xdist, the session)
    state.counts.add_all(accounting.handed_over())  # the CLI's preflight
    for row in tests:
        row["requests"] = state.counts.requests_of(row["nodeid"])
    return run_cost(state.counts, state.target, state.contract, tests, wall)


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
    state.written["summary"] = write_summary(state.report_dir, data, state.redactor)
    if data["run"]["strict_profile"] and data.get("profile_mismatches") and session.exitstatus == 0:
        session.exitstatus = 1  # --strict-profile: a mismatch fails the run


def _skip_label(row: dict) -> str:
    """How the summary counts a skip: by its verdict's label when a need names it, else by its own reason."""
    verdict = Verdict.of(row["verdict"])
    if verdict is not None and verdict.is_skip and verdict is not Verdict.SKIPPED:
        return verdict.label
    return row.get("skip_reason") or Verdict.SKIPPED.label


def _mismatch_lines(tr, data: dict, count: int) -> None:
    """The profile entries a user sets to fit the deployment, with the override that fits where it was told."""
    rows = data.get("profile_mismatches") or []
    if not rows:
        return
    strict = data["run"].get("strict_profile")
    tr.write_line(f"{count} check{'s' if count != 1 else ''} could not run as written: your deployment's choices "
                  "differ from the profile: set these entries in the target file's `profile:`"
                  + (" (--strict-profile: the run fails)" if strict else ""), red=bool(strict), yellow=not strict)
    for row in rows:
        expected = f" (the profile says: {row['expected']})" if row.get("expected") is not None else ""
        tr.write_line(f"  {row['entry']}: {row['seen']}{expected} [{len(row['tests'])} test"
                      f"{'s' if len(row['tests']) != 1 else ''}]")
    merged = merge(row.get("override") for row in rows)
    if merged:
        tr.write_line("  the override that fits what the target showed:")
        for line in override_yaml(merged).splitlines():
            tr.write_line(f"    {line}")


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
        if row["outcome"] == "skipped" and row["verdict"] != Verdict.PROFILE_MISMATCH.value:
            label = _skip_label(row)
            skip_by[label] = skip_by.get(label, 0) + 1
    skipped = ", ".join(f"{k}: {v}" for k, v in sorted(skip_by.items(), key=lambda kv: (-kv[1], kv[0])))
    mismatches = (f"{t['profile_mismatches']} profile mismatch{'es' if t['profile_mismatches'] != 1 else ''}, "
                  if t["profile_mismatches"] else "")
    tr.write_line(f"tests: {t['passed']} passed, {t['failed'] + t['errors']} failed, {mismatches}"
                  f"{t['skipped']} skipped" + (f" ({skipped})" if skipped else "")
                  + (f", {t['not_run']} not run" if t["not_run"] else ""))
    if t["partial"]:
        tr.write_line(f"requirements: {headline(t, data['run'])}")
    else:
        tr.write_line(f"requirements covered: {t['covered']} of {t['requirements']}")
    cost = data.get("cost")
    if cost:
        tr.write_line(cost_line(cost))
        for what in ("part", "credential"):
            counts = cost[f"by_{what}"].items()
            tr.write_line(f"requests per {what}: " + ", ".join(f"{name} {n:,}" for name, n in counts))
    for row in data.get("unlock") or []:
        tr.write_line(f"  would unlock {row['requirements']} requirement(s) ({row['tests']} tests): "
                      f"{row['supplied_by']}")
    _mismatch_lines(tr, data, t["profile_mismatches"])
    for group in failure_causes(tests, state.contract):
        tr.write_line(f"  {len(group['tests'])} failures have one cause: {group['cause']}", red=True)
    failed = [r for r in tests if r["verdict"] == Verdict.FAILED.value]
    if failed:
        tr.write_line("failed:")
        for row in failed:
            lines = [ln for ln in (row.get("message") or "").splitlines() if ln.strip()]
            first = next((ln for ln in lines if not ln.startswith("[")), lines[0] if lines else "")
            reqs = ", ".join(row["requirements"]) or "-"
            tr.write_line(f"  {config.cwd_relative_nodeid(row['nodeid'])} [{reqs}]: {first.strip()}", red=True)
    if "html" in state.written:
        tr.write_line(f"report: {state.written['html'].resolve()}  (results.json and summary.md beside it)")
