"""Request accounting: every attempt the harness sends, counted where it is sent and gathered for the run.

The transport counts each attempt (``attempt``), each 429 (``rate_limited``) and each ``Retry-After`` wait it
honours (``waited``); the operator adapter counts its calls (``operator_call``). Counts are kept per scope:
the running test's node id (``payconform.results.records.current()``), else the process's phase (``session``, or
``preflight`` inside ``phase("preflight")``). A worker hands each test's counts to the controller with the
test's report (``take``) and the rest at its end (``take_all``); the controller merges them in a ``RunCounts``.

Credentials are kept as the pacer's identity of them (16 hex digits of a SHA-256), never the key; the
controller names them by the target file's fields (``credential_labels``) before anything is written.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..results import records as _results
from .pacer import ANONYMOUS, credential_id

SESSION = "session"
PREFLIGHT = "preflight"
ENV_VAR = "PAYCONFORM_PREFLIGHT_REQUESTS"  # the CLI's preflight counts, handed to the pytest run
ISSUED = "issued"  # keys the run made itself (the operator's), not named in the target file
NO_CREDENTIAL = "none"

_lock = threading.Lock()
_tallies: dict[str, dict[str, Any]] = {}
_phase = SESSION


def new_tally() -> dict[str, Any]:
    """The counts of one scope, JSON-ready: attempts, 429s, operator calls, Retry-After waits, seconds
    spent waiting for pacing, attempts per credential id, per rate-limited route and credential id, the
    credentials the pacer exempts (sent over their limit on purpose), and when the first and last attempt
    went out (epoch seconds)."""
    return {"requests": 0, "rate_limited": 0, "operator": 0, "retry_waits": 0, "retry_seconds": 0.0,
            "paced_seconds": 0.0, "credentials": {}, "routes": {}, "exempt": [], "first": None, "last": None}


def merge(into: dict[str, Any], tally: Mapping[str, Any]) -> dict[str, Any]:
    """Add ``tally`` to ``into`` (both ``new_tally`` shaped); answers ``into``."""
    for key in ("requests", "rate_limited", "operator", "retry_waits", "retry_seconds", "paced_seconds"):
        into[key] = into.get(key, 0) + (tally.get(key) or 0)
    for cred, n in (tally.get("credentials") or {}).items():
        into["credentials"][cred] = into["credentials"].get(cred, 0) + n
    for route, creds in (tally.get("routes") or {}).items():
        mine = into["routes"].setdefault(route, {})
        for cred, n in creds.items():
            mine[cred] = mine.get(cred, 0) + n
    into["exempt"] = sorted(set(into.get("exempt") or []) | set(tally.get("exempt") or []))
    for key, pick in (("first", min), ("last", max)):
        times = [t for t in (into.get(key), tally.get(key)) if t is not None]
        into[key] = pick(times) if times else None
    return into


def _scope() -> str:
    rec = _results.current()
    return rec.nodeid if rec is not None and rec.nodeid else _phase


def _tally() -> dict[str, Any]:
    return _tallies.setdefault(_scope(), new_tally())


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Count what is sent outside tests, within the block, under ``name`` (``preflight``)."""
    global _phase
    previous, _phase = _phase, name
    try:
        yield
    finally:
        _phase = previous


def attempt(credential: str | None, route: str | None = None, *, exempt: bool = False,
            paced_seconds: float = 0.0) -> None:
    """One attempt sent with ``credential`` (None: none that spends a credential's budget) to a route with
    a Limits row of its own (``route``: its name), after waiting ``paced_seconds`` for the pacer."""
    cred = credential_id(credential)
    with _lock:
        t = _tally()
        t["requests"] += 1
        t["paced_seconds"] += paced_seconds
        t["last"] = time.time()
        t["first"] = t["first"] or t["last"]
        t["credentials"][cred] = t["credentials"].get(cred, 0) + 1
        if route:
            creds = t["routes"].setdefault(route, {})
            creds[cred] = creds.get(cred, 0) + 1
        if exempt and cred not in t["exempt"]:
            t["exempt"].append(cred)


def rate_limited() -> None:
    """The last attempt was answered 429."""
    with _lock:
        _tally()["rate_limited"] += 1


def waited(seconds: float) -> None:
    """The transport waited ``seconds`` as a 429's ``Retry-After`` asked before sending again."""
    with _lock:
        t = _tally()
        t["retry_waits"] += 1
        t["retry_seconds"] += seconds


def operator_call() -> None:
    """One call of the operator adapter (its own API: not under the target's rate limits)."""
    with _lock:
        _tally()["operator"] += 1


def sent(scope: str) -> int:
    """Attempts counted for ``scope`` (a running test's node id) so far in this process."""
    with _lock:
        return int((_tallies.get(scope) or {}).get("requests", 0))


def take(scope: str) -> dict[str, Any] | None:
    """The counts of ``scope`` (a node id) so far, removed from this process."""
    with _lock:
        return _tallies.pop(scope, None)


def take_all() -> dict[str, dict[str, Any]]:
    """Every scope's counts so far, removed from this process."""
    with _lock:
        out = dict(_tallies)
        _tallies.clear()
        return out


def hand_over(scope: str) -> None:
    """Pass ``scope``'s counts (the CLI's preflight) to the pytest run this process starts next
    (environment variable ``PAYCONFORM_PREFLIGHT_REQUESTS``; ``handed_over`` reads it there)."""
    tally = take(scope)
    if tally:
        os.environ[ENV_VAR] = json.dumps({scope: tally})


def handed_over() -> dict[str, dict[str, Any]]:
    """The counts ``hand_over`` passed to this process (none when unreadable)."""
    try:
        data = json.loads(os.environ.get(ENV_VAR) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def preflight_ended() -> float | None:
    """When the CLI's preflight sent its last request (epoch seconds; None without a preflight): it reads every
    key once, so a test that needs a credential's whole rate window to itself waits for that read to leave it."""
    ends = [t.get("last") for t in handed_over().values() if isinstance(t, dict) and t.get("last")]
    return max(ends) if ends else None


def part_of(nodeid: str) -> str:
    """The part of a suite test: the folder under ``suites/`` (else the first folder) of its node id."""
    folders = nodeid.split("::", 1)[0].split("/")[:-1]
    if "suites" in folders and folders.index("suites") + 1 < len(folders):
        return folders[folders.index("suites") + 1]
    return folders[0] if folders else "-"


def phase_of(scope: str) -> str:
    """``preflight``, ``fuzz`` (tests under suites/fuzz) or ``suites`` (other tests and the session)."""
    if scope in (PREFLIGHT, SESSION):
        return PREFLIGHT if scope == PREFLIGHT else "suites"
    return "fuzz" if part_of(scope) == "fuzz" else "suites"


def credential_labels(credentials: Mapping[str, Any]) -> dict[str, str]:
    """Credential id -> the target file's name for it (``api_key_pool[2]``; the first name wins)."""
    labels: dict[str, str] = {ANONYMOUS: NO_CREDENTIAL}
    for name, value in credentials.items():
        values = [(f"{name}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, list) else [(name, value)]
        for label, v in values:
            if isinstance(v, str) and v and name != "signing_private_key":
                labels.setdefault(credential_id(v), label)
    return labels


def rate_limit_requirements(contract: Any) -> set[str]:
    """Requirement ids whose tests draw 429s on purpose: the Limits rows (rates, ``Retry-After``), the
    error types answered with 429, and requirements about ``RATE_LIMITED`` (named in the quote or the id)."""
    limits = contract.limits or {}
    ids = {r.get("requirement") for r in limits.get("rate_limits") or []}
    retry = limits.get("retry_after") or {}
    ids |= {retry.get("requirement"), *(retry.get("also") or [])}
    ids |= {row.get("requirement") for row in contract.errors.values() if 429 in (row.get("statuses") or [])}
    ids |= {rid for rid, r in contract.requirements.items()
            if "RATE_LIMITED" in str(r.get("quote") or "") or "RATE-LIMITED" in rid}
    return {i for i in ids if i}


class RunCounts:
    """The controller's merge of every scope's counts, from every process of the run."""

    def __init__(self) -> None:
        self.scopes: dict[str, dict[str, Any]] = {}

    def add(self, scope: str, tally: Mapping[str, Any] | None) -> None:
        if tally:
            merge(self.scopes.setdefault(scope, new_tally()), tally)

    def add_all(self, tallies: Mapping[str, Mapping[str, Any]] | None) -> None:
        for scope, tally in (tallies or {}).items():
            self.add(scope, tally)

    def requests_of(self, nodeid: str) -> int:
        return int((self.scopes.get(nodeid) or {}).get("requests", 0))

    def run_tally(self, preflight: bool = False) -> dict[str, Any]:
        """Everything the run sent to the API, the preflight only when asked (the floor counts it: the wall
        time does)."""
        total = new_tally()
        for scope, tally in self.scopes.items():
            if preflight or scope != PREFLIGHT:
                merge(total, tally)
        return total

    def summary(self, credentials: Mapping[str, Any], planned: Iterable[str]) -> dict[str, Any]:
        """The counts for ``results.json``: per phase, part and (named) credential, the requests sent over a
        limit on purpose (on the credentials the pacer exempts: a key's budget is read without them), 429s
        planned (in a test of ``planned`` node ids) and unplanned, ``Retry-After`` waits, seconds spent
        waiting for pacing."""
        planned = set(planned)
        run = self.run_tally()
        by_phase = {"preflight": 0, "suites": 0, "fuzz": 0}
        by_part: dict[str, int] = {}
        limited = {"planned": 0, "unplanned": 0}
        operator = 0
        for scope, tally in self.scopes.items():
            by_phase[phase_of(scope)] += tally["requests"]
            operator += tally["operator"]
            if scope not in (PREFLIGHT, SESSION):
                by_part[part_of(scope)] = by_part.get(part_of(scope), 0) + tally["requests"]
            limited["planned" if scope in planned else "unplanned"] += tally["rate_limited"]
        labels = credential_labels(credentials)
        by_credential: dict[str, int] = {}
        over_limit: dict[str, int] = {}
        issued = 0
        for cred, n in sorted(run["credentials"].items(), key=lambda kv: -kv[1]):
            label = labels.get(cred, ISSUED)
            issued += label == ISSUED
            by_credential[label] = by_credential.get(label, 0) + n
            if cred in run["exempt"]:
                over_limit[label] = over_limit.get(label, 0) + n
        return {
            "requests": run["requests"],
            "by_phase": dict(by_phase, operator=operator),
            "by_part": dict(sorted(by_part.items())),
            "by_credential": by_credential,
            "by_route": {route: sum(creds.values()) for route, creds in sorted(run["routes"].items())},
            "issued_keys": issued,
            "over_limit": {"requests": sum(over_limit.values()), "credentials": sorted(over_limit)},
            "rate_limited": limited,
            "retry_after": {"waits": run["retry_waits"], "seconds": round(run["retry_seconds"], 3)},
            "paced_seconds": round(run["paced_seconds"], 3),
            "sending_seconds": round(run["last"] - run["first"], 3) if run["first"] is not None else 0.0,
        }
