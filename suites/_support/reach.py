"""Whether the target can reach this worker's webhook receiver, found once per worker.

A remote target without `webhooks.public_url` cannot reach a loopback receiver: every webhook test skips
with one reason (`payconform.reachability.static_reason`), no request spent. With a public URL, the first
webhook test of the worker registers the worker's reused endpoint (`deliveries.reused`), makes one payout
(payout events go to every endpoint: Events, Routing) and waits for any delivery within the dispatch bound
("a delivery lands within about 15 seconds", with margin; with an operator clock, the dispatcher is run at
once and 5 s suffice). None arriving skips the webhook tests as unreachable rather than failing them; a
probe that cannot make its payout decides nothing and the tests judge the target themselves.
"""

from __future__ import annotations

import pytest

from payconform.suite import needs_probe, probe_reason, static_reason

from .deliveries import DISPATCH_WAIT, FLUSHED_WAIT, Flush, reused
from .payouts import create_payout

PROBE_WAIT = DISPATCH_WAIT + 5.0
_verdicts: dict[str, str | None] = {}


def dispatch(request: pytest.FixtureRequest, org_id: str) -> tuple[Flush, float]:
    """How to make the target's dispatcher run now (a zero advance of the operator clock) and how long to
    wait then; without a clock, nothing and the dispatch bound."""
    try:
        clock = request.getfixturevalue("clock")
    except pytest.skip.Exception:
        return None, PROBE_WAIT
    return (lambda: clock.advance(org_id, 0)), FLUSHED_WAIT


def _probe(request: pytest.FixtureRequest, server) -> str | None:
    api, contract, unique = (request.getfixturevalue(n) for n in ("api", "contract", "unique"))
    flush, patience = dispatch(request, api.org_id)
    try:
        _, _, box = reused(api, contract, server)
        create_payout(api, contract, unique)
        seen = box.wait_for(lambda deliveries: bool(deliveries), patience, flush=flush)
    except (AssertionError, pytest.skip.Exception):
        return None  # the probe could not make its event: the webhook tests will say what is wrong
    return None if seen else probe_reason(server.base_url, patience)


def unreachable(request: pytest.FixtureRequest, server) -> str | None:
    """The skip reason when this worker's receiver cannot be reached by the target, else None."""
    if server.base_url not in _verdicts:
        target = request.getfixturevalue("target")
        reason = static_reason(target)
        if reason is None and needs_probe(target):
            reason = _probe(request, server)
        _verdicts[server.base_url] = reason
    return _verdicts[server.base_url]
