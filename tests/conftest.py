"""Session hooks of the project's tests: the target-shape runs start in the background as soon as their tests
are collected, and their tests come last (`tests/conformance/shapes_launch.py`); the runs' pacing files go to a
folder of the session's own, not to the user's cache."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from payconform.pacing.files import CACHE_VAR
from tests.conformance import shapes_launch

_OWN_CACHE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    if CACHE_VAR not in os.environ:  # the controller sets it before workers and runs start: they inherit it
        config.stash[_OWN_CACHE] = os.environ[CACHE_VAR] = tempfile.mkdtemp(prefix="payconform-tests-cache-")
    shapes_launch.configure(config)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    shapes_launch.configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    shapes_launch.collected(node.config, ids)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    shapes_launch.last(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    shapes_launch.collected(session.config, [item.nodeid for item in session.items])


def pytest_unconfigure(config: pytest.Config) -> None:
    shapes_launch.unconfigure(config)
    own = config.stash.get(_OWN_CACHE, None)
    if own is not None:
        os.environ.pop(CACHE_VAR, None)
        shutil.rmtree(own, ignore_errors=True)
