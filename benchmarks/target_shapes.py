"""What each target shape covers and costs: one reference server, each shape run twice.

Per shape and run: tests passed, failed and skipped, requirements passed, requests, wall and CPU seconds
(CPU of `payconform run` and its workers; the server's CPU for all runs at the end). The server runs at
scaled limits, declared in each target file, and the shapes of a round run side by side, as in the project's
tests (see `tests/conformance/shapes.py`); `--one-after-another` runs them in order. It asserts nothing; it
prints the figures and records them (``benchmarks/record.py``: benchmarks/results/ and docs/figures.md).

    python benchmarks/target_shapes.py                         # full, keys, credentials; two rounds
    python benchmarks/target_shapes.py --shapes keys --rounds 1 -- --select conventions
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.record import Recording, add_arguments, describe, table  # noqa: E402
from tests.conformance.shapes import IP_RATE_LIMIT, RATE_LIMIT, ROUNDS, SHAPES, run_shapes  # noqa: E402

COLUMNS = ("shape", "round", "passed", "failed", "skipped", "requirements passed", "requests", "wall s", "cpu s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=",".join(SHAPES), help=f"comma-separated, in order (default {','.join(SHAPES)})")
    p.add_argument("--rounds", type=int, default=ROUNDS)
    p.add_argument("--rate-limit", type=int, default=RATE_LIMIT)
    p.add_argument("--ip-rate-limit", type=int, default=IP_RATE_LIMIT)
    p.add_argument("--one-after-another", action="store_true", help="the shapes of a round in order, not side by side")
    p.add_argument("--out", type=Path, help="report directories go here (default reports/project-tests/shapes)")
    p.add_argument("extra", nargs="*", help="arguments after `--` go to each `payconform run`")
    add_arguments(p)
    ns = p.parse_args(argv)
    recording = Recording("target_shapes", argv)
    print(f"machine: {describe(recording.machine)}")
    runs = run_shapes(tuple(ns.shapes.split(",")), ns.rounds, rate_limit=ns.rate_limit,
                      ip_rate_limit=ns.ip_rate_limit, extra=ns.extra, out_dir=ns.out,
                      side_by_side=not ns.one_after_another)
    notes = [f"reference at rate_limit {ns.rate_limit}/min per credential, ip_rate_limit {ns.ip_rate_limit}/min"]
    notes += [f"{run.row()['shape']} round {run.row()['round']}: {line}"
              for run in runs.runs for line in run.run.describe_failures().splitlines()]
    notes.append(f"server CPU over all runs: {runs.server_cpu:.1f} s")
    notes += [f"webhook deliveries of the {shape} organization: {deliveries}"
              for shape, deliveries in runs.deliveries.items()]
    print(table(COLUMNS, [run.row() for run in runs.runs]))
    print("\n".join(notes))
    if not ns.no_record:
        print(f"recorded in {recording.save(COLUMNS, [run.row() for run in runs.runs], notes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
