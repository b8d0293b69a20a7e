"""Endpoints rule 3 and the IDEMPOTENCY_KEY_INVALID row: the grammar of an `Idempotency-Key`.

"`Idempotency-Key` header: 1-255 characters of `A-Z a-z 0-9 _ . : -` ... malformed: `400
IDEMPOTENCY_KEY_INVALID`." Every key is sent on a product write (a checkout write, so keyed: the worker's
product create, then changes of its description, `keyed_product`) with a fresh valid body, so the key is the
only thing that can be wrong. The length bounds are in
`suites/limits/test_idempotency_key_length.py`.
"""

from __future__ import annotations

import re
import secrets
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from payconform.suite import Api, Contract, Exchange, expect, expect_error, request_settings

from .._support.idempotency import expect_key_accepted, keyed_product
from .._support.types import Unique

CLASSES = (string.ascii_uppercase, string.ascii_lowercase, string.digits, "_", ".", ":", "-")
ALLOWED = "".join(CLASSES)
# Characters outside the set that can travel inside an HTTP header value (not at its edges).
OUTSIDE = " /@+=!~,;\"'é\u00fc\u2603\u30ad"


def _every_class(length: int) -> str:
    """A random key of ``length`` characters containing every allowed character class."""
    key = [secrets.choice(c) for c in CLASSES] + [secrets.choice(ALLOWED) for _ in range(length - len(CLASSES))]
    secrets.SystemRandom().shuffle(key)
    return "".join(key)


@pytest.mark.req("IDEM-CHARSET")
def test_keys_of_every_allowed_character_class_are_accepted(api: Api, contract: Contract, unique: Unique) -> None:
    """A 255-character key mixing every class of `A-Z a-z 0-9 _ . : -` is accepted. Refused, it is told apart
    class by class: each one-character key of each class is sent and the refused ones are named (a key of one
    character is also the length test's, `suites/limits/test_idempotency_key_length.py`)."""
    longest = contract.limits["idempotency"]["key_length"]["max"]
    mixed = _every_class(longest)
    ex = keyed_product(api, contract, unique, mixed)
    if _refused(ex):
        refused = [c for c in CLASSES if _refused(keyed_product(api, contract, unique, secrets.choice(c)))]
        expect(False, f"Idempotency-Key {mixed[:40]!r}... (length {len(mixed)}, every allowed class) was refused as "
               f"IDEMPOTENCY_KEY_INVALID; one-character keys refused the same way: of the classes "
               f"{[c if len(c) == 1 else f'{c[0]}-{c[-1]}' for c in refused]}", ex)
    expect_key_accepted(ex, contract, f"Idempotency-Key {mixed[:40]!r} (length {len(mixed)}) is in the grammar")


def _refused(ex: Exchange) -> bool:
    return ex.status == 400 and isinstance(ex.json, dict) and ex.json.get("type") == "IDEMPOTENCY_KEY_INVALID"


@pytest.mark.req("IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID")
@pytest.mark.parametrize("key", ["pc key", "pc/key", "café", "\u30ad\u30fc"],
                         ids=["space", "slash", "e-acute", "non-latin"])
def test_keys_outside_the_grammar_are_refused(api: Api, contract: Contract, unique: Unique, key: str) -> None:
    """A key with a character outside `A-Z a-z 0-9 _ . : -` answers 400 IDEMPOTENCY_KEY_INVALID."""
    expect_error(keyed_product(api, contract, unique, key), 400, "IDEMPOTENCY_KEY_INVALID",
                 f"Idempotency-Key {key!r} is outside the grammar")


_in_grammar = st.text(alphabet=ALLOWED, min_size=1, max_size=255)
_too_long = st.text(alphabet=ALLOWED, min_size=256, max_size=300)
_bad_char = st.tuples(st.text(alphabet=ALLOWED, min_size=1, max_size=120), st.sampled_from(OUTSIDE),
                      st.text(alphabet=ALLOWED, min_size=1, max_size=120)).map("".join)


@pytest.mark.req("IDEM-CHARSET", "IDEM-INVALID", "ERR-IDEMPOTENCY-KEY-INVALID")
@request_settings(10)  # the explicit tests above cover each class and each character kind
@given(key=st.one_of(_in_grammar, _too_long, _bad_char))
def test_a_key_is_accepted_exactly_when_it_matches_the_grammar(api: Api, contract: Contract, unique: Unique,
                                                               key: str) -> None:
    """Property: 400 IDEMPOTENCY_KEY_INVALID if and only if the key is not 1-255 characters of the set.

    Only the verdict is asserted: an accepted short key may also be one already used (409).
    """
    grammar = re.compile(contract.limits["idempotency"]["key_length"]["pattern"])
    ex = keyed_product(api, contract, unique, key)
    if grammar.fullmatch(key):
        expect(not _refused(ex), f"Idempotency-Key {key[:60]!r} (length {len(key)}) is in the grammar but was "
                            "refused as IDEMPOTENCY_KEY_INVALID", ex)
    else:
        expect_error(ex, 400, "IDEMPOTENCY_KEY_INVALID", f"Idempotency-Key {key[:60]!r} (length {len(key)})")
