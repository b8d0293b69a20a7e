"""Tolerated variants of the Conventions part: nulls, headers, request ids, media types and error entries.

The whole suite must pass under each of them.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...reference import OPERATOR_PREFIX
from ...core.responses import Outgoing
from ..patching import Authenticate, Handler, around_authenticate
from ..registry import variant
from ..rewrites import rewrite_answers, rewrite_events, rewrite_replies

if TYPE_CHECKING:
    from ...authentication.auth import Principal
    from ...core.operation import Call, Reply
    from ...reference import Reference
    from starlette.requests import Request
    from starlette.responses import Response


EXTRA_HEADERS = {"cache-control": "no-store", "x-vendor-trace": "vendor-7f3a", "x-content-type-options": "nosniff"}


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


REQUEST_ID_FIELDS = ("requestId", "originalRequestId")


DROP = object()


def _rebuild(value: Any, member: Callable[[str, Any], Any]) -> Any:
    """`value` with every object member `k: v` at any depth replaced by `member(k, v)` (left out on DROP)."""
    if isinstance(value, dict):
        kept = ((k, member(k, v)) for k, v in value.items())
        return {k: _rebuild(v, member) for k, v in kept if v is not DROP}
    if isinstance(value, list):
        return [_rebuild(v, member) for v in value]
    return value


def _without_nulls(value: Any) -> Any:
    return _rebuild(value, lambda _, v: DROP if v is None else v)


def ulid_like(request_id: str) -> str:
    """The same request id in another format (26 Crockford base-32 characters), stable per id."""
    digest = int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:17], "big")
    return "".join(CROCKFORD[(digest >> (5 * i)) & 31] for i in range(26))


def _rename_ids(value: Any) -> Any:
    return _rebuild(value, lambda k, v: ulid_like(v) if k in REQUEST_ID_FIELDS and isinstance(v, str) else v)


def _entry(entry: Any) -> Any:
    if isinstance(entry, dict) and "field" in entry:
        return {"param": entry["field"], "message": entry.get("reason", "invalid")}
    return entry


LINK_OPERATIONS = ("createCheckoutLink", "getCheckoutLink", "listCheckoutLinks", "updateCheckoutLink",
                   "publishCheckoutLink", "pauseCheckoutLink")


def _publish_error_null(reply: Reply) -> Reply:
    """The link, or each link of a page, with `publishError: null` where no publish failed."""
    body = reply.body if isinstance(reply.body, dict) else {}
    pages = [v for v in body.values() if isinstance(v, list)]
    for link in [body] if "status" in body else [row for page in pages for row in page]:
        if isinstance(link, dict):
            link.setdefault("publishError", None)
    return reply


def _chain_defaulted(value: Any) -> None:
    """Crypto account details (an object with an `address`) that name no `chain` get the first chain."""
    if isinstance(value, dict):
        if "address" in value and "chain" not in value:
            value["chain"] = "ethereum"
        for item in value.values():
            _chain_defaulted(item)
    elif isinstance(value, list):
        for item in value:
            _chain_defaulted(item)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an `accept-encoding` value admits gzip (by name or `*`, with no `q=0`)."""
    for item in accept_encoding.lower().split(","):
        name, *params = (part.strip() for part in item.split(";"))
        refused = any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params)
        if name in ("gzip", "*") and not refused:
            return True
    return False


@variant("org-alias-resolved",
         doc="`org_<orgId>` in a path addresses the organization too: 'Not an `org_`-prefixed alias' describes the "
             "id to pass, it does not forbid a server from also resolving an alias.")
def org_alias_resolved(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
        params = request.path_params
        if str(params.get("orgId", "")).startswith("org_"):
            params["orgId"] = params["orgId"].removeprefix("org_")
        return original(request)


@variant("nulls-omitted",
         doc="Null members are left out of every answer and event body (a serializer with exclude_none): the spec "
             "says '`expiresAt` (nullable)', '`completedAt` is null until completed', and lists fields without "
             "saying a null one is written.")
def nulls_omitted(ref: Reference) -> None:
    rewrite_answers(ref, _without_nulls)
    rewrite_events(ref, _without_nulls)


@variant("extra-headers",
         doc="Every answer carries response headers the spec does not name (cache-control, a vendor trace id): "
             "'Additions are backwards compatible and safe to ignore' (Versioning 2).")
def extra_headers(ref: Reference) -> None:
    def add(out: Outgoing) -> None:
        out.headers.update(EXTRA_HEADERS)

    ref.response_filters.append(add)


@variant("other-request-id-format",
         doc="Request ids are ULID-shaped instead of `req_<hex>`, in the x-request-id header, error bodies and "
             "audit rows alike: the spec fixes only 'Every response carries the `x-request-id` header; every "
             "error body carries `requestId` with the same value', never a format. The challenge's `requestId` "
             "(the id echoed in X-Svc-Request-Id) is left as issued.")
def other_request_id_format(ref: Reference) -> None:
    def rename(out: Outgoing) -> None:
        if "x-request-id" in out.headers:
            out.headers["x-request-id"] = ulid_like(out.headers["x-request-id"])
        if not (isinstance(out.body, dict) and out.body.get("type") == "SIGNATURE_CHALLENGE"):
            out.body = _rename_ids(out.body)

    ref.response_filters.append(rename)


@variant("errors-other-entry-shape",
         doc="Entries of an error body's `errors` are `{param, message}` instead of `{field, reason}`: the spec "
             "gives their content, 'the fields that failed (a field name such as `cursor` with a reason)', not "
             "their keys.")
def errors_other_entry_shape(ref: Reference) -> None:
    def reshape(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and isinstance(out.body.get("errors"), list):
            out.body["errors"] = [_entry(e) for e in out.body["errors"]]

    ref.response_filters.append(reshape)


@variant("publish-error-null",
         doc="Every checkout link carries `publishError: null` when no publish failed: the spec says only that 'a "
             "failed publish during create is reported as `publishError.type` on a 201'.")
def publish_error_null(ref: Reference) -> None:
    for op_id in LINK_OPERATIONS:
        rewrite_replies(ref, op_id, _publish_error_null)


@variant("errors-with-resolution",
         doc="Every error body carries the optional `resolution` string: '`resolution` | string | Optional.'")
def errors_with_resolution(ref: Reference) -> None:
    def resolve(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            out.body.setdefault("resolution", f"See the documentation of {out.body.get('type')}.")

    ref.response_filters.append(resolve)


@variant("json-charset",
         doc="Every JSON answer says `content-type: application/json; charset=utf-8`: the media type is the one "
             "the Wire format row names ('JSON bodies, `content-type: application/json`'), with a parameter.")
def json_charset(ref: Reference) -> None:
    def charset(out: Outgoing) -> None:
        out.headers["content-type"] = "application/json; charset=utf-8"

    ref.response_filters.append(charset)


@variant("chain-defaulted",
         doc="A crypto payment method sent without `chain` is saved on ethereum: the corridor fields are the "
             "profile's (the spec shows none of them), so a target may default one that is a choice.")
def chain_defaulted(ref: Reference) -> None:
    def wrap(handler: Handler) -> Handler:
        def defaulted(call: Call) -> Reply:
            body = call.json()
            _chain_defaulted(body)
            call.replace_json(body)
            return handler(call)
        return defaulted

    for op_id in ("addBeneficiaryMethod", "createBeneficiary"):
        ref.wrap_handler(op_id, wrap)


@variant("gzip-responses",
         doc="Every API answer is sent `content-encoding: gzip` whenever the request's `accept-encoding` admits "
             "gzip: the Wire format row names only 'JSON bodies, `content-type: application/json`', not the "
             "transfer coding of the bytes.")
def gzip_responses(ref: Reference) -> None:
    respond = ref.respond

    def gzipped(request: Request, status: int, body: Any, headers: dict[str, str] | None = None, *,
                is_error: bool = False) -> Response:
        response = respond(request, status, body, headers, is_error=is_error)
        api = not request.url.path.startswith(OPERATOR_PREFIX)
        if api and accepts_gzip(request.headers.get("accept-encoding", "")):
            response.body = gzip.compress(response.body)
            response.headers["content-length"] = str(len(response.body))
            response.headers["content-encoding"] = "gzip"
            response.headers["vary"] = "accept-encoding"
        return response

    ref.respond = gzipped  # type: ignore[method-assign]
