"""Every answer the reference gave in a whole-suite run, pristine or under the tolerated variants, is one the
OpenAPI documents describe.

What a validating proxy in front of the reference would check (see docs/contract.md): the status is listed for
the operation the server matched, and the body is accepted by the schema the document gives that status. The
reference's exchange log of a run (`SuiteRun.exchanges`) holds the answers, each with the operationId the router
matched, so an operation at a path the profile chose is judged wherever it is served. A tolerated variant answers
as the spec allows, so an answer of a variant run the documents lack is an answer the documents forgot.
"""

from __future__ import annotations

import pytest

from payconform.contract import OPENAPI_DOCUMENTS, Contract

from ..contract.answers import Documented, describe, read_exchanges
from .conftest import SuiteRun, variant_plan


def _undocumented(run: SuiteRun, what: str) -> None:
    assert run.exchanges is not None and run.exchanges.is_file(), f"the {what} kept no exchange log"
    judged = [a for a in read_exchanges(run.exchanges) if a.get("operationId")]
    assert judged, f"the exchange log of the {what} names no operation: {run.exchanges}"
    contract = Contract.load()
    problems = Documented({name: contract.openapi(name) for name in OPENAPI_DOCUMENTS}).judge(judged)
    assert not problems, (f"answers of the {what} the OpenAPI documents do not describe (fix the document where the "
                          "spec allows the answer, the reference where the document is right):\n" + describe(problems))


@pytest.mark.xdist_group("reference-runs")
def test_every_answer_of_the_pristine_run_is_documented_and_on_its_schema(pristine_run: SuiteRun) -> None:
    _undocumented(pristine_run, "pristine reference")


@pytest.mark.xdist_group("variant-runs")
@pytest.mark.parametrize("run_id", list(variant_plan()))
def test_every_answer_under_the_tolerated_variants_is_documented(run_id: str,
                                                                 variant_runs: dict[str, SuiteRun]) -> None:
    _undocumented(variant_runs[run_id], f"reference under the variants {variant_plan()[run_id]}")
