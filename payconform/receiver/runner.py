"""Run every receiver check once and write the artifacts of `payconform run`: results.json (same schema),
junit.xml and index.html (the same report writer), with the secret redacted from all of them."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from ..checks import expect
from ..cli.exit_codes import ExitCode
from ..ended import How
from ..results import records as results
from ..contract import RECEIVER, Contract
from ..redact import Redactor
from ..results.html import write_report
from ..results.skips import verdict_of
from .checks import CHECKS, Check
from .junit import write_junit
from .send import Unreachable
from .session import CheckSkipped, Session


def receiver_contract() -> Contract:
    """The contract with only the `subject: receiver` requirements, and only the parts that hold them."""
    contract = Contract.load(subject=RECEIVER)
    used = {r.get("part") for r in contract.requirements.values()}
    contract.parts = [p for p in contract.parts if p["slug"] in used]
    return contract


def _row(check: Check, outcome: str, duration: float, *, reason: str | None = None,
         message: str | None = None, transcript: list[dict] | None = None) -> dict:
    row = {"nodeid": f"receiver::{check.name}", "requirements": [check.requirement], "outcome": outcome,
           "duration": round(duration, 6), "skip_reason": reason,
           "verdict": verdict_of(reason).value if outcome == "skipped" else outcome,
           "request_ids": [], "profile_ops": [], "needs": list(check.needs)}
    if outcome == "failed":
        row.update(message=message, transcript=transcript or [])
    return row


def run_check(session: Session, check: Check, contract: Contract, redactor: Redactor) -> dict:
    """One check as a results row; its exchanges are the evidence of a failure."""
    info = contract.requirements[check.requirement]
    record = results.TestRecord(nodeid=check.name, requirements=[check.requirement], requirement_info=[{
        "id": check.requirement, "part": info.get("part"), "part_title": contract.part_title(info.get("part")),
        "section": info.get("section"), "quote": info.get("quote")}])
    token = results.use_record(record)
    session.exchanges = []
    started = time.monotonic()
    try:
        check.function(session)
        return _row(check, "passed", time.monotonic() - started)
    except CheckSkipped as exc:
        return _row(check, "skipped", time.monotonic() - started, reason=str(exc))
    except AssertionError as exc:
        message = redactor.redact("\n".join(expect.requirement_lines() + [str(exc)]))
        return _row(check, "failed", time.monotonic() - started, message=message,
                    transcript=[e.entry(redactor) for e in session.exchanges])
    finally:
        results.reset_record(token)


def run(url: str, secret: str, state_url: str | None, report_dir: Path, out: TextIO = sys.stdout, *,
        strict: bool = False) -> int:
    """All checks against the receiver at `url`; the exit code: 0 when no check failed (with `strict`, when every
    check passed: a skip fails too), 1 otherwise."""
    redactor = Redactor([secret, secret.removeprefix("whsec_")])
    contract = receiver_contract()
    started = datetime.now(timezone.utc)
    session = Session(url, secret, state_url)
    try:
        rows = [run_check(session, c, contract, redactor) for c in CHECKS]
    except Unreachable as exc:
        print(f"payconform receiver: cannot reach the receiver at {redactor(url)}: {redactor(exc)}", file=sys.stderr)
        return ExitCode.CANNOT_TEST
    finally:
        session.close()
    run_info = {"started": started.isoformat(timespec="seconds"),
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "target": url, "state_url": state_url, "kind": "receiver",
                "contract_version": contract.version, "select": [],
                "ended": {"how": How.COMPLETE.value, "detail": "every check ran", "not_run": 0}}
    data = redactor.obj(results.build_results(run=run_info, tests=rows, contract=contract))
    report_dir.mkdir(parents=True, exist_ok=True)
    results.write_json(report_dir / "results.json", data)
    write_junit(report_dir / "junit.xml", data["tests"])
    index = write_report(report_dir, data, contract, redactor)
    return _summary(data, index, out, strict)


def _summary(data: dict, index: Path, out: TextIO, strict: bool) -> int:
    """Each check that did not pass, with why; the totals; the verdict and its exit code."""
    totals = results.totals(data)
    for row in data["tests"]:
        if row["outcome"] != "passed":
            detail = row.get("skip_reason") or (row.get("message") or "").splitlines()[-1]
            print(f"{row['outcome'].upper():8} {row['nodeid']} [{', '.join(row['requirements'])}]: {detail}", file=out)
    print(f"checks: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped; "
          f"requirements covered: {totals['covered']} of {totals['requirements']}", file=out)
    print(f"report: {index.resolve()}  (results.json, junit.xml beside it)", file=out)
    skipped = totals["skipped"]
    failed = bool(totals["failed"]) or (strict and skipped > 0)
    note = (f" ({skipped} checks skipped, listed above; --strict fails on a skip)" if skipped and not strict else
            f" ({skipped} checks skipped: --strict fails on a skip)" if skipped else "")
    print(("failed" if failed else "passed") + note, file=out)
    return ExitCode.FAILED if failed else ExitCode.PASSED
