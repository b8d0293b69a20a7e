"""The preflight's profile step: do the routes most tests go through answer where the profile says?

A deployment that serves the sandbox funding or the recipient create at another path would otherwise learn
it at the end of a run, as hundreds of profile mismatches. The step probes the few profile-chosen routes
the suites call most (``probe.Prober``: reads, and writes that cannot succeed, so nothing is created),
within ``PREFLIGHT_PROBES`` requests, and says in a few lines what it found. It never stops the run: the
tests of a route that differs end as profile mismatches. ``payconform profile check`` checks every entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..client import Api
from ..context import RunContext
from ..contract import deep_merge
from ..target import Target
from ..transport.guard import is_live
from .document import is_url
from .findings import DIFFERS, MATCHES, Finding
from .probe import Budget, Prober, Unusable, calls
from .resolve import default_profile, fold_document

# Requests the preflight gives the profile's routes: each is a moment of the user's rate limit, and
# `payconform profile check` probes the rest.
PREFLIGHT_PROBES = 4


@dataclass
class ProfileStep:
    """What the step saw: lines, warnings (one per route that differs) and the requests it sent."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    requests: int = 0


def _method(op: Mapping[str, Any]) -> str:
    return str(op.get("method", "GET")).upper()


def ranked(profile: Mapping[str, Any], counted: Counter[str], *, live: bool = False) -> list[str]:
    """The profile-chosen routes, the most depended on first: the writes (the setup operations tests go
    through) by how often the suites name them, then the reads likewise. Never a delete; with a live key no
    write (the harness refuses to send one)."""
    ops = profile.get("operations") or {}
    chosen = [op_id for op_id, op in ops.items() if isinstance(op, Mapping) and op.get("source") == "profile"
              and _method(op) != "DELETE" and not (live and _method(op) != "GET")]
    return sorted(chosen, key=lambda op_id: (_method(ops[op_id]) == "GET", -counted[op_id]))


def profile_step(target: Target, api: Api, *, run: RunContext | None = None) -> ProfileStep:
    """Probe the profile's most used routes on ``target`` with ``api`` (its ``api_key``, closed here).

    A target file's OpenAPI document still to be read is folded into its profile first (through ``run``):
    the routes probed are the ones the run uses, and the run reads the document once. ``DocumentError``
    when it cannot be read."""
    step = ProfileStep()
    try:
        if target.openapi:
            step.requests += int(is_url(target.openapi))
            step.lines += [f"openapi: {note}" for note in fold_document(target, run=run)]
        profile = deep_merge(default_profile(), target.profile)
        counted = calls()
        budget = Budget(PREFLIGHT_PROBES)
        prober = Prober(api, profile, budget)
        found: list[tuple[str, Finding]] = []
        try:
            for op_id in ranked(profile, counted, live=is_live(target.api_key))[:PREFLIGHT_PROBES]:
                ex = prober.send(op_id)
                if ex is not None:
                    found.append((op_id, prober.route(op_id, ex)))
        except Unusable as exc:
            step.warnings.append(f"profile: routes not probed: {exc}")
        step.requests += PREFLIGHT_PROBES - budget.left
    finally:
        api.close()
    _say(step, found, counted, str(target.source or "FILE"))
    return step


def _say(step: ProfileStep, found: list[tuple[str, Finding]], counted: Counter[str], file: str) -> None:
    matching = [op_id for op_id, f in found if f.status == MATCHES]
    if matching:
        step.lines.append(f"profile: {len(matching)} route(s) answer as the profile says: {', '.join(matching)}")
    for op_id, f in found:
        if f.status == DIFFERS:
            step.warnings.append(f"profile: {f.entry}: {f.seen} (x-request-id {f.request_id}); the suites call "
                                 f"{op_id} in {counted[op_id]} place(s)")
        elif f.status != MATCHES:
            step.lines.append(f"profile: {f.line()}")
    if any(f.status == DIFFERS for _, f in found):
        step.warnings.append(f"profile: not fatal: a run goes on, and the tests of these routes end as profile "
                             f"mismatches; `payconform profile suggest --target {file} --openapi URL` prints the "
                             f"override, `payconform profile check --target {file}` lists every difference")
