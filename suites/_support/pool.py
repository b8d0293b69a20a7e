"""Many requests of one test, or of the end-of-run sweep, spread over the target's keys that can write.

Many rows made or removed in the target's own organization with one key wait out that key's windows (100
requests a minute): a link crowded with 101 payments held a worker a minute, the sweep of an embedded run's
rows another. The keys are the pool and the refunds key (`Target.writers`): keys of the same organization and
mode that hold `write`, so the rows are the same whichever of them makes each, and a one-key run's refunds
key, which its own tests use a dozen times, takes half of them off the key every other test uses. With one
such key (or a key outside them: a fresh organization's) every request goes out with the test's own client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from payconform.suite import Api


@contextmanager
def spread(api: Api) -> Iterator[Callable[[], Api]]:
    """Inside: a callable giving the client for the next request, on the least used of the target's keys that
    can write where `api`'s key is one of several, else `api` itself."""
    pool = list(getattr(api.target, "writers", None) or [])
    if len(pool) < 2 or api.credential not in pool:
        yield lambda: api
        return
    clients = {api.credential: api}

    def pick() -> Api:
        key = api.pacer.least_loaded(pool)
        if key not in clients:
            clients[key] = api.with_credential(key)
        return clients[key]

    try:
        yield pick
    finally:
        for key, client in clients.items():
            if key != api.credential:
                client.close()
