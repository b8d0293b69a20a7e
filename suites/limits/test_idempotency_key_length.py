"""Limits, row "Idempotency key length | 1-255 characters | keyed writes".

Keys exactly at the bounds are accepted; one character fewer (the empty header) or more is refused. The
bounds come from `contract/catalog/limits.yaml`; keys are sent on a product write (a checkout write,
`keyed_product`).
"""

from __future__ import annotations

import secrets
import string

import pytest

from payconform.suite import Api, Contract, expect_error

from .._support.idempotency import expect_key_accepted, keyed_product
from .._support.types import Unique

ALPHABET = string.ascii_letters + string.digits


def _key(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


@pytest.mark.req("LIMIT-IDEM-KEY-LENGTH", "IDEM-CHARSET")
@pytest.mark.parametrize("bound", ["min", "max"])
def test_keys_at_the_length_bounds_are_accepted(api: Api, contract: Contract, unique: Unique, bound: str) -> None:
    """A key of exactly 1 (or exactly 255) characters is taken as a key."""
    length = contract.limits["idempotency"]["key_length"][bound]
    expect_key_accepted(keyed_product(api, contract, unique, _key(length)), contract,
                        f"an Idempotency-Key of length {length} is within 1-255")


@pytest.mark.req("LIMIT-IDEM-KEY-LENGTH", "IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID")
def test_a_key_one_character_too_long_is_refused(api: Api, contract: Contract, unique: Unique) -> None:
    """A 256-character key answers 400 IDEMPOTENCY_KEY_INVALID."""
    length = contract.limits["idempotency"]["key_length"]["max"] + 1
    expect_error(keyed_product(api, contract, unique, _key(length)), 400, "IDEMPOTENCY_KEY_INVALID",
                 f"an Idempotency-Key of length {length}")


@pytest.mark.smoke
@pytest.mark.req("LIMIT-IDEM-KEY-LENGTH", "IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID")
def test_an_empty_key_is_refused(api: Api, contract: Contract, unique: Unique) -> None:
    """An empty `Idempotency-Key` header (0 characters) is refused, never run without a key.

    0 characters is outside 1-255 (malformed: IDEMPOTENCY_KEY_INVALID), but an empty header can also be read
    as a missing one (IDEMPOTENCY_KEY_REQUIRED); the spec does not choose, so both 400s are accepted.
    """
    expect_error(keyed_product(api, contract, unique, ""), 400,
                 ("IDEMPOTENCY_KEY_INVALID", "IDEMPOTENCY_KEY_REQUIRED"), "an empty Idempotency-Key header")
