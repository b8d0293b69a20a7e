"""`send`, the kit's one HTTP function: named hosts only, a total deadline, a body cap."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from payconform.receiver import send as send_mod
from payconform.receiver.send import MAX_BODY, SafetyError, send

from .conftest import serving


async def _big(request):
    return Response(b"x" * (4 * MAX_BODY))


async def _slow(request):
    await asyncio.sleep(1)
    return Response(status_code=204)


APP = Starlette(routes=[Route("/big", _big), Route("/slow", _slow)])


def test_only_the_named_hosts_are_contacted() -> None:
    with httpx.Client() as client, pytest.raises(SafetyError):
        send(client, frozenset({"127.0.0.1:9"}), "GET", "http://example.invalid/x")


def test_answers_are_capped_and_bounded() -> None:
    with serving(APP) as base, httpx.Client() as client:
        hosts = frozenset({send_mod.host_of(base)})
        big = send(client, hosts, "GET", f"{base}/big")
        slow = send(client, hosts, "GET", f"{base}/slow", deadline=0.3)
    assert big.status == 200 and len(big.response_body) == MAX_BODY and "longer than" in big.error
    assert slow.status is None and not slow.accepted and "no answer within 0.3s" in slow.error
