"""The fixtures a conformance test asks for: the target and its contract, clients per credential, the
operator and its clock, fresh organizations, the target's own organization, unique names and the webhook receiver.

Each client sends through the process's run (``payconform.run.Run``: its pacer, redactor, contract, breaker); a capability the
target lacks skips the test with the reason the report counts.
"""

from __future__ import annotations

import hashlib
import secrets as _secrets
from typing import Any

import pytest

from .. import webhooks as _webhooks
from ..client import Api
from ..contract import Contract, run_contract
from ..operator import DEFAULT_FEATURES, OPERATIONS, Clock, OrgHandle
from ..run import Run
from ..results.skips import Kind, Needs
from ..target import Target
from .session import NO_TARGET, get_state


class SkippingOperator:
    """The target's operator adapter; an action the adapter cannot do skips the test."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.capabilities = set(getattr(inner, "capabilities", set()))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name in OPERATIONS and callable(attr):
            def call(*args: Any, **kwargs: Any) -> Any:
                try:
                    return attr(*args, **kwargs)
                except NotImplementedError:
                    Needs(Kind.OPERATOR, f"cannot {name}").skip()
            return call
        return attr

    def __repr__(self) -> str:
        return f"SkippingOperator({self._inner!r})"


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    """The target under test (``payconform.target.Target``)."""
    state = get_state(request.config)
    if state.target is None:
        pytest.fail(NO_TARGET, pytrace=False)
    return state.target


@pytest.fixture(scope="session")
def run(request: pytest.FixtureRequest) -> Run:
    """This process's run (``payconform.run.Run``): urgent reads, timeout credit, observers, the run directory."""
    return get_state(request.config).run


@pytest.fixture(scope="session")
def contract() -> Contract:
    """The run's contract (requirements, catalogs, the profile with the target's overrides)."""
    return run_contract()


@pytest.fixture(scope="session")
def run_slow(request: pytest.FixtureRequest) -> bool:
    """Whether the run waits out the spec's windows of minutes in real time (``--run-slow``, the deep tier)."""
    return get_state(request.config).run_slow


@pytest.fixture
def api(request: pytest.FixtureRequest, target: Target):
    """``Api`` bound to one key of the pool (the least used) for the whole test."""
    state = get_state(request.config)
    pool = target.pool
    if not pool:
        Needs(Kind.CREDENTIAL, "api_key").skip()
    client = state.run.api(state.pacer.least_loaded(pool))
    yield client
    client.close()


@pytest.fixture
def api_as(request: pytest.FixtureRequest, target: Target):
    """Factory: ``api_as("read_only_key")`` -> ``Api`` with that credential (skips when absent)."""
    state = get_state(request.config)
    made: list[Api] = []

    def factory(name: str, **kw: Any) -> Api:
        value = target.credential(name)
        if name == "api_key" and not value:
            value = target.pool[0] if target.pool else None
        if not value:
            Needs(Kind.CREDENTIAL, name).skip()
        if isinstance(value, list):
            value = state.pacer.least_loaded(value)
        client = state.run.api(value, **kw)
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def anon(request: pytest.FixtureRequest, target: Target):
    """``Api`` that sends no credential."""
    client = get_state(request.config).run.api(None)
    yield client
    client.close()


@pytest.fixture
def operator(request: pytest.FixtureRequest, target: Target):
    """The operator adapter (skips with ``needs operator`` when the target has none)."""
    op = get_state(request.config).operator()
    if op is None:
        Needs(Kind.OPERATOR).skip()
    return SkippingOperator(op)


@pytest.fixture
def clock(request: pytest.FixtureRequest, target: Target) -> Clock:
    """``clock.advance(org_id, seconds)`` (or ``clock.advance(seconds)`` for the target's organization)."""
    op = get_state(request.config).operator()
    if op is None or "advance_clock" not in getattr(op, "capabilities", set()):
        Needs(Kind.CLOCK).skip()
    return Clock(SkippingOperator(op), target.org_id)


@pytest.fixture
def fresh_org(request: pytest.FixtureRequest, target: Target):
    """Factory: ``fresh_org(verified=True, payments_enabled=True, suspended=False, features=..., scopes=...,
    paced=True)`` -> OrgHandle. ``paced=False`` is for tests that trip the organization's rate limit on purpose."""
    state = get_state(request.config)
    inner = state.operator()
    if inner is None:
        Needs(Kind.OPERATOR).skip()
    op = SkippingOperator(inner)
    made: list[Api] = []

    def factory(verified: bool = True, payments_enabled: bool = True, suspended: bool = False,
                features: Any = DEFAULT_FEATURES, scopes: Any = ("read", "write"), paced: bool = True) -> OrgHandle:
        org_id = op.create_org(verified=verified, payments_enabled=payments_enabled, suspended=False,
                               features=list(features))
        key = op.issue_key(org_id, mode="test", scopes=list(scopes))["key"]
        state.redactor.add(key)
        if not paced and state.pacer is not None:
            state.pacer.exempt_credential(key)
        if suspended:
            op.update_org(org_id, suspended=True)

        def issue_key(**kw: Any) -> str:
            data = op.issue_key(org_id, **kw)
            state.redactor.add(data["key"])
            return data["key"]

        client = state.run.api(key, org_id=org_id, other_org_id=target.org_id)
        made.append(client)
        return OrgHandle(org_id, client, issue_key, key)

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def own_org(request: pytest.FixtureRequest, target: Target):
    """Factory: ``own_org()`` -> OrgHandle on the target's own organization with one key of the pool, the same
    interface as ``fresh_org()`` for a test whose requirement needs only a key: it runs on an organization
    that already holds other runs' rows and isolates itself by what it makes and filters on. ``issue_key``
    needs the operator (skips)."""
    state = get_state(request.config)
    if not target.pool:
        Needs(Kind.CREDENTIAL, "api_key").skip()
    made: list[Api] = []

    def issue_key(**kw: Any) -> str:
        Needs(Kind.OPERATOR, "cannot issue_key").skip()

    def factory() -> OrgHandle:
        key = state.pacer.least_loaded(target.pool)
        client = state.run.api(key)
        made.append(client)
        return OrgHandle(target.org_id, client, issue_key, key)

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def unique(request: pytest.FixtureRequest):
    """``unique("prod")`` -> ``prod-<test hash>-<random>``, short and unique per call."""
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:6]

    def make(prefix: str = "pc") -> str:
        return f"{prefix}-{digest}-{_secrets.token_hex(4)}"

    return make


@pytest.fixture(scope="session")
def webhook_server(run: Run, target: Target):
    """The webhook receiver of this process (``Run.receiver``), on the target file's ``webhooks.listen``
    address, advertising ``webhooks.public_url`` when given."""
    return run.receiver(*_webhooks.receiver_settings(target.webhooks))


@pytest.fixture
def webhook_receiver(webhook_server) -> _webhooks.Mailbox:
    """A fresh mailbox of the receiver for this test: ``.url`` to register, ``.snapshot()`` of the raw
    deliveries, ``.fail_next(n, status)`` / ``.answer(status, delay)`` to script it, ``.wait_for(...)``."""
    return webhook_server.mailbox()


@pytest.fixture
def webhook_receiver_factory(webhook_server):
    """Factory for more mailboxes in one test: ``webhook_receiver_factory() -> Mailbox``."""
    return webhook_server.mailbox

