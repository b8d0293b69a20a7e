"""A conformance test's timeout bounds the target's time, not the run's own pacing.

pytest-timeout (its ``signal`` method, the default where there is SIGALRM) arms an interval timer for each
test. A test that waits for the pacer (the run's other workers spent the credential's window, or a Limits
row's budget: with one key and eight workers a test can wait a minute for its turn) has not been slowed by the
target, so ``credit`` adds the wait to the time the test has left. Waits of concurrent threads of one test
are each credited: the bound grows by at most their sum. Under the ``thread`` method, or outside a timed test,
nothing changes. The run's ``--max-duration`` still bounds the whole run.
"""

from __future__ import annotations

import signal


def credit(seconds: float) -> None:
    """Give the running test ``seconds`` more before its timeout (see the module's docstring)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        return
    remaining, interval = signal.getitimer(signal.ITIMER_REAL)
    if remaining > 0:
        signal.setitimer(signal.ITIMER_REAL, remaining + seconds, interval)
