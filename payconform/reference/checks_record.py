"""The record of how deep each requirement's verdict goes: `contract/catalog/checks.yaml`.

Per requirement of the contract (those that bind the server), `checked` lists the clauses its tests are shown
to check: one item per mutant of this server aimed at it (its name and what it breaks; the kill matrix proves
a test of its requirements fails under it). `not_checked` says what a run with an API key alone cannot check,
and why, from the requirement's own entry (`testable`, `reason`, `needs`, the `Needs:` part of `notes`,
`operator_clauses`: what only the operator brings about where a key checks the rest). `other_clauses` says,
from `unmutated`, why a clause of a sentence that reads as several has no mutant of its own.

The record is built when the mutants change, by the reference's command line
(`python -m payconform.reference --write-checks contract`), and committed; the suite reads the file through
`Contract.checks` and never this module. The server's behaviour never depends on `contract/`: only this
build step reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import yaml

RECORD = Path("catalog") / "checks.yaml"
COMMAND = "python -m payconform.reference --write-checks contract"

# What a `needs` word asks of a run beyond one API key, as the record says it; the words a key-only run has
# anyway (api_key, profile, isolation, webhook_receiver: the harness's own receiver) are absent.
LACKING = {
    "operator": "requires the operator adapter",
    "clock": "requires an operator adapter that moves the sandbox clock",
    "real_time": "requires `--run-slow`: it waits in real time",
    "second_org": "requires a second organization (`other_org_id`)",
    "signing_key": "requires a signing key (`credentials.signing_key_id`, `credentials.signing_private_key`)",
    **{name: f"requires {words} (`credentials.{name}`)" for name, words in (
        ("read_only_key", "a read-only key"), ("refunds_key", "a key with the `refunds` scope"),
        ("crypto_key", "a key with the `crypto_payouts` scope"), ("live_key", "a live key"),
        ("revoked_key", "a revoked key"), ("expired_key", "an expired key"),
        ("pinned_key", "a key pinned to a source address"))},
}
NOT_SHOWN = "not shown"
_WHY = re.compile(r"\bNeeds:\s*(.+)$", re.DOTALL)

HEADER = f"""\
# payconform: what each requirement's tests are shown to check (generated: do not edit)
#
# Regenerate after changing a mutant or requirements.yaml: {COMMAND}
# (tests/reference/test_checks_record.py fails while this file is stale).
#
# One entry per requirement of ../requirements.yaml that binds the server, in its order:
#   checked      the clauses its tests are shown to check: one item per mutant of the reference server aimed at
#                the requirement; `breaks` is the mutant's own description of the half of the statement it
#                breaks, `with` the other requirements the same mutant breaks (the kill matrix runs the tests of
#                all of them together). A clause with no mutant is not claimed here.
#   not_checked  what a run cannot check and why: `testable: false` with its reason, each of its `needs` a run
#                with an API key alone lacks (the operator adapter, the clock, real time, other credentials), and
#                the clauses only the operator brings about where a key checks the others (`operator_clauses`)
#   other_clauses  where the sentence reads as several clauses and some have no mutant aimed at this
#                requirement: why (each is another requirement's, the sentence leaves the server free there, ...),
#                from the requirement's `unmutated`
"""


class Aimed(Protocol):
    """A mutant as the record reads it (the registry's frozen `Mutant`)."""

    @property
    def name(self) -> str: ...
    @property
    def reqs(self) -> tuple[str, ...]: ...
    @property
    def doc(self) -> str: ...


def _checked(req_id: str, mutants: Iterable[Aimed]) -> list[dict[str, Any]]:
    out = []
    for m in sorted((m for m in mutants if req_id in m.reqs), key=lambda m: m.name):
        item: dict[str, Any] = {"mutant": m.name, "breaks": m.doc}
        others = [r for r in m.reqs if r != req_id]
        if others:
            item["with"] = others
        out.append(item)
    return out


def _not_checked(req: Mapping[str, Any]) -> list[str]:
    notes = " ".join(str(req.get("notes") or "").split())
    if not req.get("testable", True):
        reason = str(req.get("reason") or "")
        head = "not specified by the spec" if reason == NOT_SHOWN else f"not testable over the API: {reason}"
        return [f"{head} — {notes}" if notes else head]
    lacking = [need for need in req.get("needs") or [] if need in LACKING]
    found = _WHY.search(notes)
    why_for = "operator" if "operator" in lacking else (lacking[0] if lacking else None)
    out = [f"{LACKING[need]}: {found.group(1).strip()}" if found and need == why_for else LACKING[need]
           for need in lacking]
    clauses = " ".join(str(req.get("operator_clauses") or "").split())
    return [*out, f"{LACKING['operator']} for: {clauses}"] if clauses else out


def _entry(req: Mapping[str, Any], aimed: list[Aimed]) -> dict[str, list]:
    entry = {"checked": _checked(str(req["id"]), aimed), "not_checked": _not_checked(req)}
    unmutated = " ".join(str(req.get("unmutated") or "").split())
    return {**entry, "other_clauses": [unmutated]} if unmutated else entry


def record(requirements: Iterable[Mapping[str, Any]], mutants: Iterable[Aimed]) -> dict[str, dict[str, list]]:
    """Requirement id -> {checked, not_checked, other_clauses?}, for every requirement that binds the server."""
    aimed = list(mutants)
    return {str(req["id"]): _entry(req, aimed) for req in requirements
            if str(req.get("subject") or "server") == "server"}


def text(contract_dir: Path, mutants: Iterable[Aimed]) -> str:
    """The record file's text, from `contract_dir`'s requirements.yaml and the mutants."""
    doc = yaml.safe_load((contract_dir / "requirements.yaml").read_text(encoding="utf-8")) or {}
    body = {"requirements": record(doc.get("requirements") or [], mutants)}
    return HEADER + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=120)


def write(contract_dir: Path, mutants: Iterable[Aimed]) -> Path:
    """Write `contract_dir`/catalog/checks.yaml; answers its path."""
    path = contract_dir / RECORD
    path.write_text(text(contract_dir, mutants), encoding="utf-8")
    return path
