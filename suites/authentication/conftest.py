"""Fixtures of the Mode B suites: the target's signing key, and signing keys registered in fresh organizations.

`signed_api` signs every request with the target's key and skips with "needs signing_key" when the target
file names none. `signing_keys.register(...)` registers a new key through the operator (a dashboard action)
in a fresh organization, so a test may move that organization's clock without touching anybody else's; its
signer then stamps requests with that organization's time. `signing_keys.rotate(old)` rotates one.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pytest

from payconform.suite import (
    Api,
    Clock,
    Contract,
    OrgHandle,
    Run,
    Signer,
    Target,
    generate_private_key_pem,
    public_key_pem,
)
from payconform.suite import Kind, Needs

from .._support.signing import Answer, expect_signature_error, product_create, send_signed, unregistered_signer


def _needs_signing_key(target: Target) -> None:
    if not (target.has("signing_key_id") and target.has("signing_private_key")):
        Needs(Kind.SIGNING_KEY).skip()


@pytest.fixture
def signed_api(target: Target, api_as: Any) -> Api:
    """An Api that signs every request with the target's signing key (Mode B)."""
    _needs_signing_key(target)
    return api_as("signing_key_id")


@pytest.fixture(scope="module")
def invalid_answer(run: Run, target: Target, contract: Contract) -> Iterator[Answer]:
    """The target's refusal of a product create signed by an unregistered key under the target's key id:
    the one SIGNATURE_INVALID answer every other mismatch must equal."""
    _needs_signing_key(target)
    with run.api(target.credential("signing_key_id")) as api:
        _, req = product_create(api, contract, lambda prefix: f"{prefix}-baseline-{secrets.token_hex(6)}")
        baseline = send_signed(api, unregistered_signer(target.credential("signing_key_id")), req)
        expect_signature_error(baseline, "SIGNATURE_INVALID", "a signature by an unregistered key (the answer "
                                                              "every other mismatch is compared with)")
        yield Answer.of(baseline)


@dataclass
class OrgClock:
    """How far a fresh organization's clock was moved; shared by every signing key of that organization."""

    offset: float = 0.0


@dataclass
class SignedOrg:
    """A fresh organization with a registered signing key; `api` signs with it (Mode B), `org.api` is Mode A."""

    org: OrgHandle
    key_id: str
    private_key_pem: str
    org_clock: OrgClock
    signer: Signer = field(init=False)
    api: Api = field(init=False)

    def __post_init__(self) -> None:
        self.signer = Signer(self.key_id, self.private_key_pem, clock=lambda: time.time() + self.org_clock.offset)
        self.api = self.org.api.with_credential(self.key_id, signer=self.signer)

    def advance(self, clock: Clock, seconds: float) -> None:
        """Move the organization's clock; the signers' timestamps follow it."""
        clock.advance(self.org.org_id, seconds)
        self.org_clock.offset += seconds


class SigningKeys:
    """Registers and rotates signing keys through the operator; closes their clients at the end of the test."""

    def __init__(self, fresh_org: Any, operator: Any) -> None:
        self._fresh_org = fresh_org
        self._operator = operator
        self._clocks: dict[str, OrgClock] = {}
        self.made: list[SignedOrg] = []

    def _handle(self, org: OrgHandle, key_id: str, private_key: str) -> SignedOrg:
        handle = SignedOrg(org, key_id, private_key, self._clocks.setdefault(org.org_id, OrgClock()))
        self.made.append(handle)
        return handle

    def register(self, org: OrgHandle | None = None, layout: Callable[[str], str] = str,
                 **registration: Any) -> SignedOrg:
        """A new key (in a fresh organization unless `org` is given); `registration` as
        `operator.register_signing_key` (scopes, expires_at, pinned_ips, ...); `layout` rewrites the public
        key's PEM text before it is registered (another valid layout of the same key)."""
        org = org if org is not None else self._fresh_org()
        private_key = generate_private_key_pem()
        data = self._operator.register_signing_key(org.org_id, **{"mode": "test", **registration},
                                                   public_key_pem=layout(public_key_pem(private_key)))
        return self._handle(org, str(data["id"]), private_key)

    def rotate(self, old: SignedOrg) -> SignedOrg:
        """Rotate `old` to a new key pair made here: the successor."""
        private_key = generate_private_key_pem()
        data = self._operator.rotate_signing_key(old.org.org_id, old.key_id, public_key_pem=public_key_pem(private_key))
        return self._handle(old.org, str(data["id"]), private_key)


@pytest.fixture
def signing_keys(fresh_org: Any, operator: Any) -> Iterator[SigningKeys]:
    """Signing keys of fresh organizations (needs the operator)."""
    keys = SigningKeys(fresh_org, operator)
    yield keys
    for handle in keys.made:
        handle.api.close()
