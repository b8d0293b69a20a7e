"""Samples: the fewest requests that end in one documented answer, a success or a refusal whose `type` the
spec names for that situation. Tests that must hold on every response (content type, request id, error body)
run over the samples instead of each inventing its own requests, and read one answer per sample: a run
sends each sample once per organization (`Sample.answer`), and each test checks its own rule on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from payconform.suite import Api, Contract, Exchange, expect_status
from payconform.suite import Kind, Needs

from . import runwide
from .products import product_body
from .types import Unique, shared_scope


@dataclass(frozen=True)
class Sample:
    """``send(api, contract, unique)`` ends in ``status`` (and error ``type``, None for a success)."""

    name: str
    status: int
    type: str | None
    send: Callable[[Api, Contract, Unique], Exchange]

    def __str__(self) -> str:
        return self.name

    def answer(self, api: Api, contract: Contract, unique: Unique) -> Exchange:
        """The sample's answer, sent the first time a test of the run asks for it in `api`'s organization
        (`runwide`): the rules about every response are checked on one exchange, each by its own test."""
        return runwide.exchange_of(runwide.shared(shared_scope(api), f"sample {self.name}",
                                                  lambda: runwide.exchange_json(self.send(api, contract, unique))))


def _idempotency_conflict(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """Same Idempotency-Key, different body: the first creates, the second is 409 IDEMPOTENCY_KEY_CONFLICT."""
    key = unique("idem")
    body = product_body(contract, unique)
    expect_status(api.op("createCheckoutProduct", json=body, idempotency_key=key), 201, "the first request")
    return api.op("createCheckoutProduct", json={**body, "name": unique("prod")}, idempotency_key=key)


def _other_org(api: Api, contract: Contract, unique: Unique) -> Exchange:
    """A read of another organization's balance: 403 FORBIDDEN (Authentication, Mode A rule 5)."""
    if api.other_org_id is None:
        Needs(Kind.TARGET, "other_org_id").skip()
    return api.op("getBalance", orgId=api.other_org_id)


SUCCESSES = [
    Sample("get-200", 200, None, lambda api, contract, unique: api.op("getBalance")),
    Sample("post-201", 201, None,
           lambda api, contract, unique: api.op("createCheckoutProduct", json=product_body(contract, unique))),
]

REFUSALS = [
    Sample("no-key-401", 401, "UNAUTHORIZED",
           lambda api, contract, unique: api.op("getBalance", credential=None)),
    Sample("other-org-403", 403, "FORBIDDEN", _other_org),
    Sample("unknown-route-404", 404, "ROUTE_NOT_FOUND",
           lambda api, contract, unique: api.get(f"/payments/organizations/{{orgId}}/{unique('no-such-route')}")),
    Sample("unknown-id-404", 404, "NOT_FOUND",
           lambda api, contract, unique: api.op("getBeneficiary", recipientId=unique("no-such-recipient"))),
    Sample("validation-400", 400, "VALIDATION_ERROR",
           lambda api, contract, unique: api.op("listBalanceTransactions", params={"type": unique("no-such-type")})),
    Sample("no-idempotency-key-400", 400, "IDEMPOTENCY_KEY_REQUIRED",
           lambda api, contract, unique: api.op("createCheckoutProduct", json=product_body(contract, unique),
                                                idempotency_key=None)),
    Sample("idempotency-conflict-409", 409, "IDEMPOTENCY_KEY_CONFLICT", _idempotency_conflict),
]

SAMPLES = SUCCESSES + REFUSALS
