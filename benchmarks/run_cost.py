"""What a run costs: requests, floor, wall time, wall/floor, unplanned 429s, requirements passed.

Starts the reference server and runs ``payconform run`` per tier (``smoke``, ``full``) against

- ``one-key``: the reference's target file with every credential it provisions but no key pool and no
  operator (``operator: {adapter: none}``), as a team with one test key of each kind would run it;
- ``embedded``: ``payconform run`` with no target (it starts its own reference and provisions a key pool).

The figures come from each run's ``results.json`` (``cost``, ``requirements``). It prints them and records
them (``benchmarks/record.py``: benchmarks/results/ and docs/figures.md); it asserts nothing about time (the
machine decides that). ``payconform run`` without ``--tier`` runs every test: then
the ``full`` rows are that run and the ``smoke`` rows are not run, and the output says so.

    python benchmarks/run_cost.py                          # every tier and target (a one-key full run is long)
    python benchmarks/run_cost.py --targets embedded --tiers full
    python benchmarks/run_cost.py --targets one-key --select conventions,limits   # a selection, named in the output
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.record import Recording, add_arguments, describe, table  # noqa: E402
from payconform.cli.serve import start_reference  # noqa: E402

TIERS = ("smoke", "full")
TARGETS = ("one-key", "embedded")
COLUMNS = ("tier", "target", "requests", "floor s", "wall s", "wall/floor", "unplanned 429s", "req. passed")


def knows_tier() -> bool:
    """Whether ``payconform run`` has ``--tier``."""
    out = subprocess.run([sys.executable, "-m", "payconform.cli", "run", "--help"], capture_output=True, text=True,
                         check=False).stdout
    return "--tier" in out


def one_key_target(full_target: Path, path: Path) -> Path:
    """The reference's target file without its key pool and operator: every credential, one key of each."""
    data = yaml.safe_load(full_target.read_text(encoding="utf-8"))
    data.get("credentials", {}).pop("api_key_pool", None)
    data["operator"] = {"adapter": "none"}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        yaml.safe_dump(data, out, sort_keys=False)
    return path


def run(report_dir: Path, tier: str | None, target: Path | None, extra: list[str]) -> dict[str, Any]:
    """One ``payconform run``; the row its results.json gives."""
    cmd = [sys.executable, "-m", "payconform.cli", "run", "--report-dir", str(report_dir)]
    cmd += ["--target", str(target)] if target else []
    cmd += ["--tier", tier] if tier else []
    cmd += extra
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    results = report_dir / "results.json"
    if not results.exists():
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        return {"error": f"no results.json (exit code {proc.returncode})", "elapsed": elapsed}
    data = json.loads(results.read_text(encoding="utf-8"))
    cost = data.get("cost") or {}
    return {
        "requests": cost.get("requests"),
        "floor s": cost.get("floor_seconds"),
        "wall s": cost.get("wall_seconds"),
        "wall/floor": cost.get("wall_over_floor"),
        "unplanned 429s": (cost.get("rate_limited") or {}).get("unplanned"),
        "req. passed": sum(1 for r in data.get("requirements") or [] if r.get("verdict") == "passed"),
        "binding": cost.get("floor_binding"),
        "elapsed": elapsed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiers", default=",".join(TIERS), help="comma-separated: smoke,full")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated: one-key,embedded")
    parser.add_argument("--select", help="run only this selection (passed to --select); the output names it")
    parser.add_argument("--fuzz-budget", type=int, help="passed to the runs (0: no fuzz phase); the output names it")
    parser.add_argument("--workers", help="passed to the runs as -n (default: payconform run's own, 2)")
    parser.add_argument("--keep", metavar="DIR", help="keep each run's report under DIR")
    add_arguments(parser)
    ns = parser.parse_args(argv)
    recording = Recording("run_cost", argv)
    tiers = [t for t in ns.tiers.split(",") if t]
    targets = [t for t in ns.targets.split(",") if t]
    tier_flag = knows_tier()
    print(f"machine: {describe(recording.machine)}")
    notes = []
    if not tier_flag:
        notes.append("`payconform run` has no --tier here: the full rows are the default run (every test); "
                     "smoke is not run")
    extra = (["--select", ns.select] if ns.select else []) + (
        ["--fuzz-budget", str(ns.fuzz_budget)] if ns.fuzz_budget is not None else []) + (
        ["-n", ns.workers] if ns.workers else [])
    if extra:
        notes.append(f"every run with {' '.join(extra)} (not a whole tier)")
    for note in notes:
        print(f"note: {note}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="payconform-cost-") as tmp:
        base = Path(ns.keep) if ns.keep else Path(tmp)
        for target_kind in targets:
            server = None
            target_file = None
            if target_kind == "one-key":
                server, target = start_reference("127.0.0.1", 0, None, None, None)
                full = target.dump(Path(tmp) / "reference-target.yaml")
                target_file = one_key_target(full, Path(tmp) / "one-key-target.yaml")
            try:
                for tier in tiers:
                    if not tier_flag and tier != "full":
                        rows.append({"tier": tier, "target": target_kind, "requests": "not run (no --tier)"})
                        continue
                    row = run(base / f"{target_kind}-{tier}", tier if tier_flag else None, target_file, extra)
                    rows.append(dict(row, tier=tier, target=target_kind))
                    done = (f"{tier} / {target_kind}: done in {row['elapsed']:.0f}s"
                            + (f", floor set by {row['binding']}" if row.get("binding") else "")
                            + (f" ({row['error']})" if row.get("error") else ""))
                    notes.append(done)
                    print(f"  {done}", flush=True)
            finally:
                if server is not None:
                    server.stop()
    print(table(COLUMNS, rows))
    if not ns.no_record:
        print(f"recorded in {recording.save(COLUMNS, rows, notes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
