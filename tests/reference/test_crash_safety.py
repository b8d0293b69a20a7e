"""No write lost or doubled across a crash: SIGKILL the reference during concurrent keyed writes, restart it on
the same database, retry every key with the same body (what the spec tells a client to do), and each key has
executed exactly once.

The idempotency record completes in the handler's own transaction, so a crash either keeps the writes and
the key (the retry replays) or loses both (the retry runs it for the first time): never the writes alone.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from pathlib import Path

import httpx

from payconform.provision import provision_reference
from payconform.refserver import RefServer

ROUNDS = 20
WRITES = 8  # concurrent keyed writes per round
PRODUCTS = "/checkout/organizations/{org}/products"


def _create(client: httpx.Client, url: str, key: str, api_key: str, name: str) -> int | None:
    try:
        return client.post(url, json={"name": name, "currency": "USD", "unitAmount": "12.00"},
                           headers={"x-api-key": api_key, "idempotency-key": key}).status_code
    except httpx.HTTPError:
        return None  # the server died under the request: the client does not know what happened


def _names(client: httpx.Client, base_url: str, org: str, api_key: str) -> list[str]:
    names, cursor = [], None
    while True:
        params = {"limit": "100", **({"cursor": cursor} if cursor else {})}
        page = client.get(base_url + PRODUCTS.format(org=org), params=params, headers={"x-api-key": api_key}).json()
        names += [p["name"] for p in page["data"]]
        cursor = page.get("nextCursor")
        if not cursor:
            return names


def test_sigkill_during_keyed_writes_never_executes_a_key_twice(tmp_path: Path) -> None:
    db, token = tmp_path / "reference.sqlite", secrets.token_urlsafe(16)
    rng = random.Random(20261125)
    written: dict[str, str] = {}  # idempotency key -> product name
    server = RefServer(db=db, operator_token=token).start()
    target = provision_reference(server)
    keys = iter(target.pool * (ROUNDS * WRITES * 3))  # spread over the pool: under each key's rate limit
    try:
        for round_ in range(ROUNDS):
            url = server.base_url + PRODUCTS.format(org=target.org_id)
            batch = {f"crash-{round_}-{i}-{secrets.token_hex(4)}": f"crash {round_}.{i} {secrets.token_hex(3)}"
                     for i in range(WRITES)}
            written.update(batch)
            with httpx.Client(timeout=5, trust_env=False) as client:
                threads = [threading.Thread(target=_create, args=(client, url, k, next(keys), n))
                           for k, n in batch.items()]
                for t in threads:
                    t.start()
                time.sleep(rng.uniform(0, 0.05))
                server.proc.kill()  # SIGKILL: no shutdown, no flush beyond what SQLite committed
                for t in threads:
                    t.join(10)
            server.proc.wait(10)
            server = RefServer(db=db, operator_token=token).start()
            url = server.base_url + PRODUCTS.format(org=target.org_id)
            with httpx.Client(timeout=10, trust_env=False) as client:
                for key, name in batch.items():
                    status = _create(client, url, key, next(keys), name)
                    assert status == 201, f"round {round_}: the retry of key {key} answered {status}"
        with httpx.Client(timeout=10, trust_env=False) as client:
            names = _names(client, server.base_url, target.org_id, next(keys))
        counts = {name: names.count(name) for name in written.values()}
        wrong = {name: n for name, n in counts.items() if n != 1}
        assert not wrong, f"products created other than once after crashes and retries: {wrong}"
    finally:
        server.stop()


def test_a_crash_right_after_the_handler_commits_keeps_the_key(tmp_path: Path) -> None:
    """The worst moment: the handler's transaction committed and the process dies before answering. The
    retry under the same key must replay, not create a second product."""
    db, token = tmp_path / "reference.sqlite", secrets.token_urlsafe(16)
    server = RefServer(db=db, operator_token=token).start()
    target = provision_reference(server)
    key, name = f"crash-{secrets.token_hex(6)}", f"crash at commit {secrets.token_hex(4)}"
    try:
        with httpx.Client(timeout=10, trust_env=False) as client:
            client.post(server.operator_url + "/faults", headers={"x-operator-token": token},
                        json={"org_id": target.org_id, "operation": "createCheckoutProduct",
                              "kind": "crash_after_handler"}).raise_for_status()
            url = server.base_url + PRODUCTS.format(org=target.org_id)
            first = _create(client, url, key, target.api_key, name)
            assert first is None, f"the fault did not end the process (answered {first})"
        server.proc.wait(10)
        server = RefServer(db=db, operator_token=token).start()
        url = server.base_url + PRODUCTS.format(org=target.org_id)
        with httpx.Client(timeout=10, trust_env=False) as client:
            retry = _create(client, url, key, target.api_key, name)
            assert retry == 201, f"the same-key retry answered {retry}: the key was lost and the write ran again"
            names = _names(client, server.base_url, target.org_id, target.api_key)
        assert names.count(name) == 1, f"the product was created {names.count(name)} times"
    finally:
        server.stop()
