"""Benchmark: ``payconform run --select conventions,errors,endpoints`` against each hostile loopback mode.

Prints, per mode, the wall time, the exit code, whether results.json was written, the peak resident memory
of the run's processes, the tests' verdicts and any secret found in the artifacts. It prints the figures
and records them (``benchmarks/record.py``: benchmarks/results/ and docs/figures.md); the bounds are asserted
by ``tests/hostile``. Run from the repository root: ``python benchmarks/hostile.py`` (``--modes silent,huge``
for some, ``--workers N`` for the run's xdist workers, default 2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.record import Recording, add_arguments, describe  # noqa: E402
from tests.hostile.runner import run_mode  # noqa: E402
from tests.hostile.server import MODES  # noqa: E402

SELECT = "conventions,errors,endpoints"
BOUND = 900.0  # seconds after which a run is killed (and shown with exit code -9)
COLUMNS = ("mode", "wall s", "exit", "report", "peak MB", "leaks", "verdicts")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--workers", default="2")
    parser.add_argument("--select", default=SELECT)
    add_arguments(parser)
    ns = parser.parse_args(argv)
    recording = Recording("hostile", argv)
    setting = f"payconform run --select {ns.select} --workers {ns.workers}, request_timeout 2 s, per hostile mode"
    print(f"machine: {describe(recording.machine)}")
    print(setting)
    print(f"{'mode':<14}{'wall s':>8}{'exit':>6}{'report':>8}{'peak MB':>9}  leaks  verdicts")
    rows = []
    with tempfile.TemporaryDirectory(prefix="payconform-hostile-") as tmp:
        for mode in ns.modes.split(","):
            o = run_mode(mode, Path(tmp), select=ns.select, workers=ns.workers, bound=BOUND)
            verdicts = ", ".join(f"{k} {v}" for k, v in sorted(o.verdicts.items()))
            rows.append({"mode": mode, "wall s": o.seconds, "exit": o.exit_code,
                         "report": "yes" if o.report_written else "no", "peak MB": o.peak_rss_mb,
                         "leaks": len(o.leaks), "verdicts": verdicts})
            print(f"{mode:<14}{o.seconds:>8.1f}{o.exit_code:>6}{'yes' if o.report_written else 'no':>8}"
                  f"{o.peak_rss_mb:>9.0f}  {len(o.leaks):<5}  {verdicts}", flush=True)
    if not ns.no_record:
        print(f"recorded in {recording.save(COLUMNS, rows, [setting])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
