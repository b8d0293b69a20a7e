"""The kit's way out (the harness's transport): named hosts only, a total deadline, a body cap, no raise for
what the receiver answered."""

from __future__ import annotations

import asyncio

import pytest
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route

from payconform.receiver.send import MAX_BODY, SafetyError, Sender, Unreachable
from payconform.redact import Redactor

from .conftest import serving


async def _big(request):
    return Response(b"x" * (4 * MAX_BODY))


async def _slow(request):
    await asyncio.sleep(1)
    return Response(status_code=204)


APP = Starlette(routes=[Route("/big", _big), Route("/slow", _slow)])


def test_only_the_named_hosts_are_contacted() -> None:
    sender = Sender(["http://127.0.0.1:9/hook"], Redactor())
    with pytest.raises(SafetyError):
        sender.send("GET", "http://example.invalid/x")
    with pytest.raises(Unreachable):
        sender.send("GET", "http://127.0.0.1:9/hook")
    sender.close()


def test_answers_are_capped_and_bounded() -> None:
    with serving(APP) as base:
        sender = Sender([base], Redactor())
        big = sender.send("GET", f"{base}/big")
        slow = sender.send("GET", f"{base}/slow", deadline=0.3)
        sender.close()
    assert big.status == 200 and len(big.response_body) <= MAX_BODY and str(MAX_BODY) in big.error
    assert slow.status is None and not slow.accepted and "no answer within 0.3s" in slow.error
