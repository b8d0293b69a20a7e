"""What every request of a run shares: the target, its contract, the pacer, the redactor, the breaker and the
observers of exchanges.

The transport, the client and the fuzz session take a ``RunContext`` and nothing else of the run, so they sit
below ``payconform.run.Run`` (which adds what the plugin and the fixtures need: the run directory, the operator
adapter, webhook receivers, the fuzz session) and never import it. A ``RunContext()`` with nothing given is a
detached one (no pacing, no breaker, no observers): what a tool or a unit test sends through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from . import redact as _redact
from .pacing import accounting as _accounting
from .pacing import pacer as _pacing
from .pacing import timeouts as _timeouts

if TYPE_CHECKING:
    from .contract import Contract
    from .transport.breaker import Breaker

Observer = Callable[[Any], None]  # sees each request's final exchange


class RunContext:
    """The parts of a run a request goes through (see the module's docstring)."""

    def __init__(self, *, target: Any = None, contract: Contract | None = None, pacer: Any = None,
                 redactor: _redact.Redactor | None = None) -> None:
        self.target = target
        self.contract = contract
        self.pacer = pacer if pacer is not None else _pacing.NoPacer()
        self.redactor = redactor if redactor is not None else _redact.default()
        self.breaker: Breaker | None = None
        self._observers: list[Observer] = []

    # -- what the transport reports -------------------------------------------------------------

    def observe(self, observer: Observer) -> None:
        """Have ``observer`` see every request's final exchange of this run (once; it must not raise)."""
        if observer not in self._observers:
            self._observers.append(observer)

    def observed(self, ex: Any) -> Any:
        """Hand the exchange ``ex`` to the observers; answers it."""
        for observer in self._observers:
            observer(ex)
        return ex

    # -- what a test asks of the run ------------------------------------------------------------

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

    def close(self) -> None:
        """Release the pacer's file."""
        try:
            self.pacer.close()
        except Exception:
            pass
