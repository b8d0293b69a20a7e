"""How a mutant or variant wraps one server instance's behaviour: an operation's handler (`around`), a refusal
that sticks (`refuse_for_good`) or the authentication of requests (`around_authenticate`), and the request body
those wrappers read."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from ..core.errors import ApiError
from ..core.operation import Call, Reply

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..authentication.auth import Principal
    from ..reference import Reference

Handler = Callable[[Call], Reply]
Authenticate = Callable[["Request"], "Principal"]


def around(ref: Reference, *op_ids: str) -> Callable[[Callable[[Handler, Call], Reply]], None]:
    """Decorator: `f(original, call)` becomes the handler of each operation in `op_ids`."""
    def install(f: Callable[[Handler, Call], Reply]) -> None:
        for op_id in op_ids:
            ref.wrap_handler(op_id, lambda original: lambda call: f(original, call))
    return install


def refuse_for_good(ref: Reference, op_id: str, param: str, refusals: Collection[str], refusal: str) -> None:
    """Once `op_id` refused a resource (path parameter `param`) with one of the error types `refusals`, every
    later call for that resource is refused with `refusal`, whatever has changed since."""
    refused: set[str] = set()

    @around(ref, op_id)
    def sticky(original: Handler, call: Call) -> Reply:
        key = call.params[param]
        if key in refused:
            raise ApiError(refusal)
        try:
            return original(call)
        except ApiError as err:
            if err.type in refusals:
                refused.add(key)
            raise


def around_authenticate(ref: Reference) -> Callable[[Callable[[Authenticate, Request], Principal]], None]:
    """Decorator: `f(original, request)` replaces this server's `ref.auth.authenticate`."""
    def install(wrapper: Callable[[Authenticate, Request], Principal]) -> None:
        original = ref.auth.authenticate
        ref.auth.authenticate = lambda request: wrapper(original, request)  # type: ignore[method-assign]
    return install


def body(call: Call) -> dict[str, Any]:
    """The parsed request body (the object handlers read), or an empty dict."""
    parsed = call.json()
    return parsed if isinstance(parsed, dict) else {}
