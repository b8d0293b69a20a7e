"""Benchmark: ``payconform run --select conventions,errors,endpoints`` against each hostile loopback mode.

Prints, per mode, the wall time, the exit code, whether results.json was written, the peak resident memory
of the run's processes, the tests' verdicts and any secret found in the artifacts. It prints figures; the
bounds are asserted by ``tests/hostile``. Run from the repository root: ``python benchmarks/hostile.py``
(``--modes silent,huge`` for some, ``--workers N`` for the run's xdist workers, default 2).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile.runner import run_mode  # noqa: E402
from tests.hostile.server import MODES  # noqa: E402

SELECT = "conventions,errors,endpoints"
BOUND = 900.0  # seconds after which a run is killed (and shown with exit code -9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--workers", default="2")
    parser.add_argument("--select", default=SELECT)
    ns = parser.parse_args()
    print(f"payconform run --select {ns.select} --workers {ns.workers}, request_timeout 2 s, per hostile mode")
    print(f"{'mode':<14}{'wall s':>8}{'exit':>6}{'report':>8}{'peak MB':>9}  leaks  verdicts")
    with tempfile.TemporaryDirectory(prefix="payconform-hostile-") as tmp:
        for mode in ns.modes.split(","):
            o = run_mode(mode, Path(tmp), select=ns.select, workers=ns.workers, bound=BOUND)
            verdicts = ", ".join(f"{k} {v}" for k, v in sorted(o.verdicts.items()))
            print(f"{mode:<14}{o.seconds:>8.1f}{o.exit_code:>6}{'yes' if o.report_written else 'no':>8}"
                  f"{o.peak_rss_mb:>9.0f}  {len(o.leaks):<5}  {verdicts}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
