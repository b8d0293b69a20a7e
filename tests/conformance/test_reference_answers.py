"""Every answer the pristine reference gave in its whole-suite run is one the OpenAPI documents describe.

What a validating proxy in front of the reference would check (see docs/contract.md): the status is listed for
the operation the server matched, and the body is accepted by the schema the document gives that status. The
reference's exchange log of the pristine run (`pristine_run.exchanges`) holds the answers, each with the
operationId the router matched, so an operation at a path the profile chose is judged wherever it is served.
"""

from __future__ import annotations

import pytest

from payconform.contract import OPENAPI_DOCUMENTS, Contract

from ..contract.answers import Documented, describe, read_exchanges
from .conftest import SuiteRun

pytestmark = pytest.mark.xdist_group("reference-runs")


def test_every_answer_of_the_pristine_run_is_documented_and_on_its_schema(pristine_run: SuiteRun) -> None:
    assert pristine_run.exchanges is not None and pristine_run.exchanges.is_file(), "the pristine run kept no log"
    answers = read_exchanges(pristine_run.exchanges)
    judged = [a for a in answers if a.get("operationId")]
    assert judged, f"the pristine run's exchange log names no operation: {pristine_run.exchanges}"
    contract = Contract.load()
    problems = Documented({name: contract.openapi(name) for name in OPENAPI_DOCUMENTS}).judge(judged)
    assert not problems, ("answers of the pristine reference the OpenAPI documents do not describe (fix the document "
                          "where the spec allows the answer, the reference where the document is right):\n"
                          + describe(problems))
