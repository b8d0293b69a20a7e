"""The target stopped answering: after a few consecutive transport failures the run stops asking it.

A target that hangs, resets connections or answers garbage fails every request the same way, and each test
would wait out its own deadline to fail with the same cause: hours for a full run. The transport reports
each attempt here (an HTTP answer of any status, even a cut one, resets the count). After ``THRESHOLD``
consecutive transport failures in one process the breaker trips: it writes a marker file in the run's
shared directory, so every xdist worker sees it; from then on the transport sends nothing and the plugin
fails each test left at once with the cause ``target stopped answering``.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

THRESHOLD = 3  # consecutive transport failures (refused, reset, timed out, not HTTP) that end the target
CAUSE = "target stopped answering"
MARKER = "target-stopped-answering"


class Breaker:
    """Counts this process's consecutive transport failures; the trip is shared through ``directory``."""

    def __init__(self, directory: str | Path, threshold: int = THRESHOLD) -> None:
        self.path = Path(directory) / MARKER
        self.threshold = threshold
        self._failures = 0
        self._lock = threading.Lock()

    def tripped(self) -> str | None:
        """Why the target is considered gone (by this process or another), or None while it answers."""
        try:
            return self.path.read_text(encoding="utf-8")
        except OSError:
            return None

    def answered(self) -> None:
        """An attempt got an HTTP answer: the target is alive."""
        with self._lock:
            self._failures = 0

    def failed(self, error: str) -> None:
        """An attempt ended at the transport level (``error`` says how); trips after ``threshold`` in a row."""
        with self._lock:
            self._failures += 1
            if self._failures < self.threshold or self.path.exists():
                return
            reason = f"{self._failures} requests in a row failed at the transport level; the last: {error}"
            tmp = self.path.with_name(f"{MARKER}.{os.getpid()}.tmp")
            tmp.write_text(reason, encoding="utf-8")
            os.replace(tmp, self.path)

