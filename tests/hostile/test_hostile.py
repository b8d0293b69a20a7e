"""``payconform run`` against hostile targets on loopback: it ends on its own with exit code 1 or 2, writes its
report, leaks no secret and stays within its memory bound whatever the target does; against a target gone
(silent, slowloris, garbage, reset) the breaker fails every test left after its consecutive failed attempts.

Each server turns hostile after the preflight's requests (``--after``), so the suite's own handling is what
is exercised (the preflight's is in tests/harness/test_preflight.py). A small selection keeps these runs
cheap; ``benchmarks/hostile.py`` runs the large one and prints its figures, times included.
"""

from __future__ import annotations

import pytest

from payconform.transport.breaker import THRESHOLD

from .runner import run_mode
from .server import MODES

# a few tests of the conventions part (without the fuzz phase, whose collection alone costs seconds)
SELECT = "ERR-ROUTE-NOT-FOUND,CONV-PREFIX,CONV-REQUEST-ID-HEADER"
SUITES = ("--suites", "suites/conventions")
SAFETY = 600.0  # seconds after which a run is killed: a stop for a hang, not a bound of the test
PEAK_MB = 300.0
# modes that fail at the transport level: the breaker ends the run ("target stopped answering")
GONE = {"silent", "slowloris", "garbage", "reset"}


@pytest.mark.parametrize("mode", MODES)
def test_a_hostile_target_gets_a_bounded_run_with_a_report_and_no_leak(mode, tmp_path, request) -> None:
    workers = "2" if mode == "silent" else "0"  # one run shows the breaker's trip reaching every worker
    root = request.config.rootpath
    # --run-slow: every case of a `breadth` test runs (on one key the request id's samples would stand for each
    # other), so each sends its own request into the hostile target
    o = run_mode(mode, tmp_path, select=SELECT, workers=workers, bound=SAFETY,
                 extra=(SUITES[0], str(root / SUITES[1]), "--run-slow"))
    tail = o.output[-3000:]
    assert o.exit_code in (1, 2), f"{mode}: exit code {o.exit_code} (negative: killed at {SAFETY:.0f} s)\n{tail}"
    assert o.report_written, f"{mode}: no results.json\n{tail}"
    assert not o.leaks, f"{mode}: the api key is in {o.leaks}"
    assert o.peak_rss_mb < PEAK_MB, f"{mode}: peak RSS {o.peak_rss_mb:.0f} MB"
    if mode in GONE:
        total = sum(o.verdicts.values())
        assert o.verdicts == {"failed": total}, o.verdicts
        assert o.stopped_answering >= total - THRESHOLD * max(int(workers), 1), \
            f"{mode}: {o.stopped_answering} of {total} tests failed as 'target stopped answering'\n{tail}"
