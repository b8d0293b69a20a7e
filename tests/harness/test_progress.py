"""The progress line of a long run: parts done of parts selected, requests of the plan, time left at the floor."""

from __future__ import annotations

import pytest

from payconform.pacing.tiers import Pace
from payconform.plugin import progress as progress_module
from payconform.plugin.progress import EVERY, Progress

from .fake_project import write_project

pytest_plugins = ["pytester"]

TESTS = ["suites/events/test_a.py::test_one", "suites/events/test_a.py::test_two",
         "suites/limits/test_b.py::test_three", "suites/fuzz/test_c.py::test_four"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_with_parts_requests_and_time_left() -> None:
    clock = Clock()
    progress = Progress(Pace(keys=1, rate_limit=100), planned=1000, clock=clock)
    progress.selected(TESTS)
    progress.ended(TESTS[0])
    progress.ended(TESTS[2])
    assert not progress.due()  # no line before the interval
    clock.now += EVERY
    assert progress.due() and not progress.due()  # one line per interval
    line = progress.line(sent=400)
    assert line == ("payconform progress: 1 of 3 parts done (2 of 4 tests); 400 of about 1,000 planned requests "
                    "sent; about 6 min left at the pacing floor (100 requests/min)")


def test_a_selection_estimates_what_is_left_from_its_finished_tests() -> None:
    progress = Progress(Pace(keys=2, rate_limit=100), planned=None, clock=Clock())
    progress.selected(TESTS)
    assert "about 0 s left" in progress.line(sent=0)
    progress.ended(TESTS[0])
    line = progress.line(sent=100)  # 100 for one test: about 300 for the three left, on two keys
    assert "0 of 3 parts done (1 of 4 tests); 100 requests sent;" in line and "(200 requests/min)" in line
    assert "about 0 s left" not in line


@pytest.mark.parametrize("quiet", [False, True])
def test_the_controller_writes_its_lines_between_pytests_own(pytester, monkeypatch, ref_target, quiet) -> None:
    """A tiny run in this process (a line at every test's end): the lines come through the terminal
    reporter; ``-q`` has none."""
    write_project(pytester.path)
    monkeypatch.setenv("PAYCONFORM_CONTRACT_DIR", str(pytester.path / "contract"))
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    _, path = ref_target
    args = ["-p", "no:cacheprovider", "-p", "no:randomly", "suites", "--target", str(path), "--report-dir", "out",
            "-k", "test_balance or test_slow"] + (["-q"] if quiet else [])
    res = pytester.runpytest_inprocess(*args)
    lines = [ln for ln in res.outlines if ln.startswith("payconform progress:")]
    if quiet:
        assert not lines
    else:
        assert lines and lines[-1].startswith("payconform progress: 1 of 1 parts done (3 of 3 tests);"), res.outlines
