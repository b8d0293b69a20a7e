"""How a run ended, as ``results.json`` says it (``run.ended.how``), JUnit (the ``payconform_ended`` property) and
the report: the plugin decides it, ``payconform run`` answers its exit code by it. Scripts read these values."""

from __future__ import annotations

from enum import Enum


class How(str, Enum):
    """Every test ran, or what ended the run before."""

    COMPLETE = "complete"  # every selected test ran
    MAXFAIL = "maxfail"  # -x or --maxfail: the run stopped after that many failures
    MAX_DURATION = "max_duration"  # --max-duration left tests not run
    INTERRUPTED = "interrupted"  # SIGINT (Ctrl-C), or SIGTERM through payconform run


JUNIT_PROPERTY = "payconform_ended"
# Set in the environment of the pytest run of ``payconform run``, which leads its own process group: the plugin
# may interrupt that group (the tests in flight, in every worker) once -x or --maxfail is reached.
OWN_GROUP_VAR = "PAYCONFORM_OWN_PROCESS_GROUP"
