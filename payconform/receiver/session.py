"""One kit run against one receiver: sends deliveries and state reads (through `send`), keeps each check's
exchanges as its evidence, and turns what came back into verdicts a check can raise."""

from __future__ import annotations

import time

from ..redact import Redactor
from ..results.skips import Kind, Needs
from .deliveries import Delivery, Factory
from .send import Exchange, Sender, Unreachable
from .state import GRACE_SECONDS, PayoutState, parse, payout_url, settle


class CheckFailed(AssertionError):
    """The receiver did not do what the requirement asks; the message says what was expected and seen."""


class CheckSkipped(Exception):
    """The check cannot run here (the reason says what would let it)."""


class Session:
    def __init__(self, url: str, secret: str, state_url: str | None = None) -> None:
        self.url, self.state_url = url, state_url
        self.factory = Factory(secret)
        self.sender = Sender([u for u in (url, state_url) if u], Redactor([secret, secret.removeprefix("whsec_")]))
        self.exchanges: list[Exchange] = []
        self.reached = False  # some request got an answer: later connection failures are the receiver's

    def close(self) -> None:
        self.sender.close()

    def _send(self, method: str, url: str, headers: list[tuple[str, str]] = (), body: bytes = b"") -> Exchange:
        try:
            exchange = self.sender.send(method, url, headers=headers, body=body)
        except Unreachable as exc:
            if not self.reached:
                raise
            raise CheckFailed(f"expected: an answer\nseen: {exc}") from None
        self.reached = self.reached or exchange.status is not None
        self.exchanges.append(exchange)
        return exchange

    def deliver(self, delivery: Delivery) -> Exchange:
        return self._send("POST", self.url, delivery.headers, delivery.body)

    def accepted(self, delivery: Delivery, what: str) -> Exchange:
        """Deliver; CheckFailed unless the receiver answers 2xx."""
        exchange = self.deliver(delivery)
        if not exchange.accepted:
            raise CheckFailed(f"expected: 2xx for {what}\ntarget answered: {exchange.outcome()}")
        return exchange

    def refused(self, delivery: Delivery, what: str) -> Exchange:
        """Deliver; CheckFailed when the receiver answers 2xx (or nothing at all)."""
        exchange = self.deliver(delivery)
        if exchange.accepted or exchange.status is None:
            raise CheckFailed(f"expected: an answer other than 2xx for {what} (the sender retries it, the "
                              f"receiver does not act on it)\ntarget answered: {exchange.outcome()}")
        return exchange

    def require_state(self) -> str:
        if not self.state_url:
            raise CheckSkipped(Needs(Kind.STATE_URL, "the receiver's conclusions cannot be seen without it").reason)
        return self.state_url

    def payout(self, payout_id: str) -> PayoutState:
        return parse(self._send("GET", payout_url(self.require_state(), payout_id)))

    def settled(self, payout_id: str, *deliveries: Delivery) -> PayoutState:
        """The payout once the receiver shows it processed `deliveries` (bounded wait)."""
        return settle(lambda: self.payout(payout_id), [d.event_id for d in deliveries])

    def after_grace(self, payout_id: str) -> PayoutState:
        """The payout after a pause long enough for a (wrong) second processing to show."""
        time.sleep(GRACE_SECONDS)
        return self.payout(payout_id)
