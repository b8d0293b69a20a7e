"""Fixtures for the reference server's own unit tests: an in-memory server and a TestClient on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from payconform.reference.app import build_app
from payconform.reference.reference import Config, Reference

from .helpers import OPERATOR_TOKEN, Org, new_org


@pytest.fixture
def ref() -> Iterator[Reference]:
    reference = Reference(Config(operator_token=OPERATOR_TOKEN))
    yield reference
    reference.close()


@pytest.fixture
def client(ref: Reference) -> Iterator[TestClient]:
    with TestClient(build_app(ref), raise_server_exceptions=False, client=("127.0.0.1", 50000)) as c:
        yield c


@pytest.fixture
def org(client: TestClient) -> Org:
    return new_org(client)
