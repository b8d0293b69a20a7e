"""Fixtures every part shares on top of the plugin's: the webhook receiver's mailboxes skip, with one
reason, when the target cannot reach the receiver (`_support/reach.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from ._support.reach import unreachable


def _reachable(request: pytest.FixtureRequest, server: Any, value: Any) -> Any:
    """``value``, or a skip ("needs receiver: ...") when the target cannot reach the receiver."""
    reason = unreachable(request, server)
    if reason:
        pytest.skip(reason)
    return value


@pytest.fixture
def webhook_receiver(request: pytest.FixtureRequest, webhook_server, webhook_receiver):
    """The plugin's mailbox, where the target can reach the receiver."""
    return _reachable(request, webhook_server, webhook_receiver)


@pytest.fixture
def webhook_receiver_factory(request: pytest.FixtureRequest, webhook_server, webhook_receiver_factory):
    """The plugin's mailbox factory, where the target can reach the receiver."""
    return _reachable(request, webhook_server, webhook_receiver_factory)
