"""Fixtures every part shares on top of the plugin's: the webhook receiver's mailboxes skip, with one
reason, when the target cannot reach the receiver (`_support/reach.py`)."""

from __future__ import annotations

import pytest

from ._support.reach import unreachable


@pytest.fixture
def webhook_receiver(request: pytest.FixtureRequest, webhook_server, webhook_receiver):
    """The plugin's mailbox, or a skip ("needs receiver: ...") when the target cannot reach the receiver."""
    reason = unreachable(request, webhook_server)
    if reason:
        pytest.skip(reason)
    return webhook_receiver


@pytest.fixture
def webhook_receiver_factory(request: pytest.FixtureRequest, webhook_server, webhook_receiver_factory):
    """The plugin's mailbox factory, or the same skip."""
    reason = unreachable(request, webhook_server)
    if reason:
        pytest.skip(reason)
    return webhook_receiver_factory
