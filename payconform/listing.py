"""``payconform run --list``: the conformance tests a run would execute, with their requirement ids,
without running them (a pytest plugin used with ``--collect-only``; the selection is applied first)."""

from __future__ import annotations

import json
import os

import pytest

from .plugin import is_suite_path, needs, requirement_ids

ENV_VAR = "PAYCONFORM_LIST_OUT"


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    out = os.environ.get(ENV_VAR)
    if not out:
        return
    rows = [{"nodeid": item.nodeid, "requirements": requirement_ids(item), "needs": needs(item)}
            for item in session.items if is_suite_path(item.path, session.config)]
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(rows, fh)
