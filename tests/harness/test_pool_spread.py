"""A test's many requests over the target's keys that can write (`suites/_support/pool.py`, `Target.writers`):
each on the least used of them where the test's key is one of several, else on the test's own client."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from payconform.target import Target
from suites._support.pool import spread


class FakeApi:
    def __init__(self, credential: str, pool: list[str], load: dict[str, int]) -> None:
        self.credential, self.target, self.load, self.closed = credential, SimpleNamespace(writers=pool), load, False
        self.pacer = SimpleNamespace(least_loaded=lambda keys: min(keys, key=lambda k: load.get(k, 0)))
        self.made: list[FakeApi] = []

    def with_credential(self, credential: str) -> Any:
        self.made.append(FakeApi(credential, self.target.writers, self.load))
        return self.made[-1]

    def close(self) -> None:
        self.closed = True


def _send(pick: Any, n: int) -> list[str]:
    keys = []
    for _ in range(n):
        client = pick()
        client.load[client.credential] = client.load.get(client.credential, 0) + 1
        keys.append(client.credential)
    return keys


def test_a_pool_key_spreads_over_the_pool_and_closes_what_it_opened() -> None:
    api = FakeApi("k1", ["k1", "k2", "k3"], {"k1": 5})
    with spread(api) as pick:
        keys = _send(pick, 11)
    assert sorted(keys) == ["k1"] + ["k2"] * 5 + ["k3"] * 5
    assert len(api.made) == 2 and all(c.closed for c in api.made) and not api.closed


def test_one_key_or_a_key_outside_the_pool_sends_everything_itself() -> None:
    for api in (FakeApi("k1", ["k1"], {}), FakeApi("fresh", ["k1", "k2"], {})):
        with spread(api) as pick:
            assert {id(pick()) for _ in range(5)} == {id(api)}
        assert not api.made and not api.closed


def test_the_writers_are_the_pool_and_the_refunds_key() -> None:
    def target(**creds: Any) -> Target:
        return Target.from_dict({"base_url": "http://127.0.0.1:1/business/api/v1", "org_id": "o", "credentials": creds})

    assert target(api_key="svc_test_a", refunds_key="svc_test_r").writers == ["svc_test_a", "svc_test_r"]
    assert target(api_key="svc_test_a", api_key_pool=["svc_test_a", "svc_test_b"]).writers == ["svc_test_a", "svc_test_b"]
    assert target(api_key="svc_test_a", read_only_key="svc_test_ro", live_key="svc_live_l").writers == ["svc_test_a"]
    assert target(api_key="svc_test_a", refunds_key="svc_test_a").writers == ["svc_test_a"]
