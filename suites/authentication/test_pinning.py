"""Resources > API key, row Pinning ("Optional allowlist of source addresses"), Authentication > Mode A rule 4
("Requests from other addresses are refused with `KEY_IP_NOT_ALLOWED`") and the KEY_IP_NOT_ALLOWED row (401)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import pytest

from payconform.suite import Target, expect_error, expect_status
from payconform.suite import Kind, Needs


def _own_address(target: Target) -> str:
    """The source address this machine uses towards the target; known to be what the target sees only when
    the target is on this machine (no proxy or NAT between)."""
    parts = urlsplit(target.base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    with socket.create_connection((parts.hostname, port), timeout=5) as conn:
        local, remote = conn.getsockname()[0], conn.getpeername()[0]
    if not ipaddress.ip_address(remote).is_loopback:
        Needs(Kind.TARGET, "a target on this machine: the source address a remote target sees is not known").skip()
    return local


@pytest.mark.smoke
@pytest.mark.req("AUTH-KEY-IP-PINNED", "ERR-KEY-IP-NOT-ALLOWED", "KEY-PINNING")
@pytest.mark.needs("pinned_key")
def test_pinned_key_refused_from_other_address(api_as) -> None:
    """The run's pinned key (its allowlist excludes the suite's address): 401 KEY_IP_NOT_ALLOWED."""
    expect_error(api_as("pinned_key").op("getBalance"), 401, "KEY_IP_NOT_ALLOWED")


@pytest.mark.req("KEY-PINNING", "ERR-KEY-IP-NOT-ALLOWED")
@pytest.mark.needs("operator")
def test_key_pinned_to_own_address_works(fresh_org, target: Target) -> None:
    """A key pinned to the address the suite calls from works from there."""
    org = fresh_org()
    key = org.issue_key(mode="test", scopes=["read"], pinned_ips=[_own_address(target)])
    expect_status(org.api.op("getBalance", credential=key), 200, "a key pinned to the caller's own address")
