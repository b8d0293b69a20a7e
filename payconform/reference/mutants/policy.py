"""Mutants of `GET /payment-reasons` and `GET /policy`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..operation import Call, Reply
from . import mutant

if TYPE_CHECKING:
    from ..reference import Reference


@mutant("payment-reasons-empty", reqs=["DISC-REASONS-ROUTE"],
        doc="GET /payment-reasons answers an empty list.")
def _(ref: Reference) -> None:
    ref.wrap_handler("listPaymentReasons", lambda original: lambda call: Reply(200, {"data": []}))


@mutant("policy-developer-always-listed", reqs=["POLICY-FEATURES-DEVELOPER"],
        doc="GET /policy lists `developer` in `features` even when developer tools are off.")
def _(ref: Reference) -> None:
    def wrap(original: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        def handler(call: Call) -> Reply:
            reply = original(call)
            features = sorted({*reply.body["features"], "developer"})
            return dataclasses.replace(reply, body={**reply.body, "features": features})
        return handler

    ref.wrap_handler("getPolicy", wrap)


@mutant("policy-developer-never-listed", reqs=["POLICY-FEATURES-DEVELOPER"],
        doc="GET /policy leaves `developer` out of `features` even when developer tools are on.")
def _(ref: Reference) -> None:
    def wrap(original: Callable[[Call], Reply]) -> Callable[[Call], Reply]:
        def handler(call: Call) -> Reply:
            reply = original(call)
            features = [f for f in reply.body["features"] if f != "developer"]
            return dataclasses.replace(reply, body={**reply.body, "features": features})
        return handler

    ref.wrap_handler("getPolicy", wrap)
