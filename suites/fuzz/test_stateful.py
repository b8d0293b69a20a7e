"""Stateful fuzzing: random walks through the OpenAPI links of the contract.

A walk creates a resource (a recipient, a product, a link, ...) and follows the documented links with the
ids the target returned - read it, change it, add a payment method, delete it - so the checks also see
answers about resources that exist (``ensure_resource_availability``: a created resource can be read;
``use_after_free``: a deleted one is gone). ``--fuzz-budget`` walks of at most ``stateful_steps`` steps
(fuzz.yaml) per contract document, over the operations the fuzz phase covers. Their request bodies are shaped
like the profile's example bodies (``payconform/fuzz/walk_bodies.py``), so that creates succeed and the walks go on.
"""

from __future__ import annotations

import pytest

from payconform.suite import FUZZ_DOCUMENTS, fuzz_session

from .checks import REQUIREMENTS

SESSION = fuzz_session()


@pytest.mark.sweep
@pytest.mark.req(*REQUIREMENTS)
@pytest.mark.parametrize("document", FUZZ_DOCUMENTS)
def test_links_walk(document: str) -> None:
    """Every answer along a walk through the links holds to the contract and the spec's error rules."""
    if not SESSION.operations(document):
        pytest.skip(f"no operation of the {document} contract is fuzzed (fuzz.yaml include_operations)")
    SESSION.run_stateful(SESSION.schema(document, walks=True))
