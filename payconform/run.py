"""The run context: what one process of a run shares with every request it sends and every test it runs.

One ``Run`` per pytest process, built by the plugin once the target is loaded and handed explicitly to each
``Transport`` (so to each ``Api`` and to the fuzz session) and to the fixtures: the target and its contract,
the pacer, the redactor, the breaker, the observers of exchanges, the shared run directory, the operator
adapter, the webhook receivers and the fuzz session. A ``Run()`` with nothing given is a detached one (no
pacing, no breaker, no observers), what a tool or a unit test sends through.

Suites reach it through ``payconform.suite``: the ``run`` fixture, ``api.run``, or ``run_of(config)`` in a hook.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .pacing import accounting as _accounting
from .pacing import pacer as _pacing
from . import redact as _redact
from .pacing import timeouts as _timeouts
from .webhooks import Receiver

if TYPE_CHECKING:
    from .transport.breaker import Breaker
    from .client import Api
    from .contract import Contract
    from .fuzz.session import FuzzSession
    from .transport.sender import Exchange


class Run:
    """One process's run: built once, passed to whatever sends or records (see the module's docstring).
    ``worker``: the process is an xdist worker (it hands what it noted to the controller)."""

    def __init__(self, *, target: Any = None, contract: Contract | None = None, pacer: Any = None,
                 redactor: _redact.Redactor | None = None,
                 operator: Callable[[], Any] | None = None, worker: bool = False) -> None:
        self.target = target
        self.worker = worker
        self.contract = contract
        self.pacer = pacer if pacer is not None else _pacing.NoPacer()
        self.redactor = redactor if redactor is not None else _redact.default()
        self.breaker: Breaker | None = None
        self.run_dir: Path | None = None
        self.fuzz: FuzzSession | None = None
        self._operator = operator
        self._observers: list[Callable[[Exchange], None]] = []
        self._receivers: dict[tuple[str, str | None], Receiver] = {}

    # -- what the transport reports -------------------------------------------------------------

    def observe(self, observer: Callable[[Exchange], None]) -> None:
        """Have ``observer`` see every request's final exchange of this run (once; it must not raise)."""
        if observer not in self._observers:
            self._observers.append(observer)

    def observed(self, ex: Exchange) -> Exchange:
        """Hand ``ex`` to the observers; answers it."""
        for observer in self._observers:
            observer(ex)
        return ex

    # -- what a test asks of the run ------------------------------------------------------------

    def api(self, credential: str | None, **kw: Any) -> Api:
        """An ``Api`` on the run's target that sends through this run (its pacer, redactor, breaker)."""
        from .client import Api

        assert self.target is not None
        return Api(self.target, credential, run=self, **kw)

    @staticmethod
    @contextmanager
    def urgent() -> Iterator[None]:
        """Requests sent inside the block take their credential's next free slot before other requests do."""
        with _pacing.urgent():
            yield

    @staticmethod
    def credit(seconds: float) -> None:
        """Give the running test ``seconds`` more before its timeout: a wait that is not the target's time."""
        _timeouts.credit(seconds)

    @staticmethod
    def preflight_ended() -> float | None:
        """When the CLI's preflight sent its last request (epoch seconds; None without a preflight)."""
        return _accounting.preflight_ended()

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

    def close(self) -> None:
        """Release the pacer's file (the receivers close at exit)."""
        try:
            self.pacer.close()
        except Exception:
            pass


RUN = pytest.StashKey[Run]()  # where the plugin keeps the process's run on the pytest config


def run_of(config: pytest.Config) -> Run:
    """The process's run, for a hook that has only the config (``KeyError`` when the plugin built none)."""
    return config.stash[RUN]
