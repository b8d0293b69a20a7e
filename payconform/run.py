"""The process's run: one per pytest process, built by the plugin once the target is loaded and handed
explicitly to the fixtures and, as the ``RunContext`` it extends, to each ``Transport``, ``Api`` and the fuzz
session. Beyond what every request shares (``payconform.context``), it holds the shared run directory, the
operator adapter, the webhook receivers and the fuzz session.

Suites reach it through ``payconform.suite``: the ``run`` fixture, ``api.run``, or ``run_of(config)`` in a hook.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import redact as _redact
from .client import Api
from .context import RunContext
from .webhooks import Receiver

if TYPE_CHECKING:
    from .contract import Contract
    from .fuzz.session import FuzzSession


class Run(RunContext):
    """One process's run (see the module's docstring). ``worker``: the process is an xdist worker (it hands
    what it noted to the controller)."""

    def __init__(self, *, target: Any = None, contract: Contract | None = None, pacer: Any = None,
                 redactor: _redact.Redactor | None = None,
                 operator: Callable[[], Any] | None = None, worker: bool = False) -> None:
        super().__init__(target=target, contract=contract, pacer=pacer, redactor=redactor)
        self.worker = worker
        self.run_dir: Path | None = None
        self.fuzz: FuzzSession | None = None
        self._operator = operator
        self._receivers: dict[tuple[str, str | None], Receiver] = {}

    def api(self, credential: str | None, **kw: Any) -> Api:
        """An ``Api`` on the run's target that sends through this run (its pacer, redactor, breaker)."""
        assert self.target is not None
        return Api(self.target, credential, run=self, **kw)

    def operator(self) -> Any:
        """The target's operator adapter (None when it has none)."""
        return self._operator() if self._operator is not None else None

    def has_operator(self) -> bool:
        return self.operator() is not None

    def receiver(self, listen: str = "127.0.0.1:0", public_url: str | None = None) -> Receiver:
        """The run's one webhook receiver for these settings, started on first use and closed at exit. Not a
        fixture's to close: xdist may tear a worker's session fixtures down between batches and set them up
        again, and a fixed port (behind a tunnel) could not be bound a second time."""
        key = (listen, public_url)
        if key not in self._receivers:
            self._receivers[key] = Receiver(listen, public_url)
            atexit.register(self._receivers[key].close)
        return self._receivers[key]


RUN = pytest.StashKey[Run]()  # where the plugin keeps the process's run on the pytest config


def run_of(config: pytest.Config) -> Run:
    """The process's run, for a hook that has only the config (``KeyError`` when the plugin built none)."""
    return config.stash[RUN]
