"""Mutants of the Conventions part: request ids, media types, instants, the organization path and the
wire format of JSON bodies.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import base64
import json
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

from email.utils import format_datetime
from starlette.datastructures import QueryParams

from ..resources import ledger
from ..core.errors import ApiError
from ..core.operation import Call, Reply
from ..resources.products import product_json
from ..reference import API_PREFIX
from ..core.responses import Outgoing
from .patching import Authenticate, Handler, around, around_authenticate
from .registry import mutant
from .support.events import on_record
from .support.ledger import BTX, ID_CURSOR, lists
from .support.requests import objects

if TYPE_CHECKING:
    from ..authentication.auth import Principal
    from ..core.operation import Operation
    from ..reference import Reference
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Receive, Scope, Send


def _http_date(value: Any) -> Any:
    try:
        return format_datetime(datetime.fromisoformat(value), usegmt=True)
    except (TypeError, ValueError):
        return value


ASCENDING = {"getBalanceHistory", "listPayoutBatchItems"}


def _shift(ref: Reference, op_id: str, cursor: str, step: int) -> str:
    """The cursor `step` rows further back towards the start of the list."""
    if op_id in ID_CURSOR:
        return str(int(cursor) + step)
    data, _ = cursor.rsplit(".", 1)
    payload = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    return ref.cursors.encode(payload["s"], payload["p"] + (-step if op_id in ASCENDING else step))


def _shift_next_cursors(ref: Reference, step: int) -> None:
    """Every cursor-paged list's `nextCursor` is moved `step` rows back (`_shift`): the page boundary is off by one."""
    for op_id in lists(ref):
        @around(ref, op_id)
        def handler(original: Handler, call: Call, op_id: str = op_id) -> Reply:
            reply = original(call)
            if isinstance(reply.body, dict) and reply.body.get("nextCursor"):
                reply.body["nextCursor"] = _shift(ref, op_id, reply.body["nextCursor"], step)
            return reply


def wrap_handlers(ref: Reference, wrap: Callable[[Handler], Handler], only: Callable[[Operation], bool]) -> None:
    """Wrap the handler of every operation ``only`` selects."""
    for op_id, op in list(ref.operations.items()):
        if only(op):
            ref.wrap_handler(op_id, wrap)


def _timezone_less(value: str) -> bool:
    try:
        return "T" in value and datetime.fromisoformat(value).tzinfo is None
    except ValueError:
        return False


@mutant("request-id-body-differs", reqs=["CONV-REQUEST-ID-BODY"],
        doc="Error bodies carry a requestId different from the x-request-id header.")
def request_id_body_differs(ref: Reference) -> None:
    def differ(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            out.body["requestId"] = out.request_id + "-body"

    ref.response_filters.append(differ)


@mutant("request-id-header-missing", reqs=["CONV-REQUEST-ID-HEADER"],
        doc="Successful responses have no x-request-id header.")
def request_id_header_missing(ref: Reference) -> None:
    def drop(out: Outgoing) -> None:
        if out.status < 400:
            out.headers.pop("x-request-id", None)

    ref.response_filters.append(drop)


@mutant("org-ids-uuid", reqs=["CONV-ORGID-OPAQUE"],
        doc="Organizations get UUIDs (with hyphens) instead of CUID-shaped ids.")
def org_ids_uuid(ref: Reference) -> None:
    ref.new_org_id = lambda: str(uuid.uuid4())


@mutant("org-alias-server-error", reqs=["CONV-ORGID-NO-ALIAS"],
        doc="`org_<orgId>` in a path is neither refused nor resolved: it answers 500 INTERNAL. (An `org_`-prefixed "
            "id as issued cannot be tried: the harness refuses such a target before any test runs.)")
def org_alias_server_error(ref: Reference) -> None:
    @around_authenticate(ref)
    def authenticate(original: Authenticate, request: Request) -> Principal:
        if str(request.path_params.get("orgId", "")).startswith("org_"):
            raise ApiError("INTERNAL", "Could not resolve the organization.")
        return original(request)


@mutant("product-read-across-orgs", reqs=["CONV-ORG-SCOPED"],
        doc="A product id of another organization reads under this organization's `{orgId}`.")
def product_read_across_orgs(ref: Reference) -> None:
    def wrap(original: Any) -> Any:
        def handler(call: Call) -> Reply:
            row = ref.store.one("SELECT * FROM products WHERE id = ? AND deleted_at IS NULL",
                                (call.params["productId"],))
            return Reply(200, product_json(row)) if row is not None else original(call)
        return handler

    ref.wrap_handler("getCheckoutProduct", wrap)


@mutant("instants-http-dates", reqs=["CONV-INSTANT-ISO8601"],
        doc="Instants in answers are HTTP dates (`Sun, 22 Nov 2026 15:00:00 GMT`) instead of ISO 8601.")
def instants_http_dates(ref: Reference) -> None:
    def rewrite(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: _http_date(v) if k.endswith("At") and isinstance(v, str) else rewrite(v)
                    for k, v in value.items()}
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        return value

    def dates(out: Outgoing) -> None:
        if not out.is_error:
            out.body = rewrite(out.body)

    ref.response_filters.append(dates)


@mutant("instants-bare-dates", reqs=["CONV-INSTANT-ISO8601"],
        doc="Instants in answers are bare dates (`2026-11-22`): the day without the time of day.")
def instants_bare_dates(ref: Reference) -> None:
    def dates(out: Outgoing) -> None:
        if out.is_error:
            return
        for obj in objects(out.body):
            for name, value in obj.items():
                if name.endswith("At") and isinstance(value, str):
                    obj[name] = value[:10]

    ref.response_filters.append(dates)


@mutant("events-fee-as-string", reqs=["CONV-MONEY-FEE-OBJECT"],
        doc="Payout events carry `fee` as a decimal string instead of `{amount, currency}`.")
def events_fee_as_string(ref: Reference) -> None:
    on_record(ref, lambda rec, o, m, t, d, n: rec(o, m, t, {**d, "fee": d["fee"]["amount"]} if t.startswith("payout.")
                                                else d, n))


@mutant("btx-rows-restated", reqs=["BTX-APPEND-ONLY"],
        doc="Listed balance transactions are restated: every row shows the latest `balanceAfter`.")
def btx_rows_restated(ref: Reference) -> None:
    @around(ref, BTX)
    def list_balance_transactions(original: Handler, call: Call) -> Reply:
        reply = original(call)
        latest = ledger.balance(ref.store, call.org_id, call.mode, "USD")
        for row in reply.body["data"]:
            row["balanceAfter"] = f"{latest:.2f}"
        return reply


@mutant("paging-repeats-boundary-row", reqs=["CONV-PAGING-CURSOR-OPAQUE"],
        doc="Off by one at the page boundary: `nextCursor` points one row back, so the last row of a page is "
            "the first row of the next.")
def paging_repeats_boundary_row(ref: Reference) -> None:
    _shift_next_cursors(ref, 1)


@mutant("paging-skips-boundary-row", reqs=["CONV-PAGING-CURSOR-OPAQUE"],
        doc="Off by one the other way: `nextCursor` points one row ahead, so the first row of each next page is "
            "never listed.")
def paging_skips_boundary_row(ref: Reference) -> None:
    _shift_next_cursors(ref, -1)


@mutant("paging-cursor-never-ends", reqs=["CONV-PAGING-LAST-PAGE-NO-CURSOR"],
        doc="`nextCursor` is present on the last page too (the cursor just sent, or a placeholder on a first page).")
def paging_cursor_never_ends(ref: Reference) -> None:
    for op_id in lists(ref):
        @around(ref, op_id)
        def handler(original: Handler, call: Call) -> Reply:
            reply = original(call)
            if isinstance(reply.body, dict) and not reply.body.get("nextCursor"):
                reply.body["nextCursor"] = call.query_params.get("cursor") or "end"
            return reply


@mutant("product-archived-as-string", reqs=["PROD-FIELDS"],
        doc="Products answer `archived` as a string (\"false\") instead of a boolean.")
def product_archived_as_string(ref: Reference) -> None:
    def as_string(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "unitAmount" in obj and isinstance(obj.get("archived"), bool):
                obj["archived"] = str(obj["archived"]).lower()

    ref.response_filters.append(as_string)


@mutant("api-served-outside-prefix", reqs=["CONV-PREFIX"],
        doc="The API also answers without the /business/api/v1 prefix: a route's path sent to the host root is served.")
def api_served_outside_prefix(ref: Reference) -> None:
    original = ref.error_response

    def error_response(request: Request, err: ApiError) -> Response:
        if err.type != "ROUTE_NOT_FOUND" or request.url.path.startswith(API_PREFIX + "/"):
            return original(request, err)

        async def serve_under_prefix(scope: Scope, receive: Receive, send: Send) -> None:
            rerouted = {**scope, "path": API_PREFIX + scope["path"],
                        "raw_path": API_PREFIX.encode() + scope.get("raw_path", b"")}
            await scope["app"](rerouted, receive, send)

        return serve_under_prefix  # type: ignore[return-value]

    ref.error_response = error_response  # type: ignore[method-assign]


@mutant("error-content-type-text-plain", reqs=["CONV-JSON-CONTENT-TYPE"],
        doc="Error answers carry `content-type: text/plain` (the body is still JSON).")
def error_content_type_text_plain(ref: Reference) -> None:
    def text_plain(out: Outgoing) -> None:
        if out.is_error:
            out.headers["content-type"] = "text/plain; charset=utf-8"

    ref.response_filters.append(text_plain)


@mutant("success-content-type-text-plain", reqs=["CONV-JSON-CONTENT-TYPE"],
        doc="Successful answers carry `content-type: text/plain` (the body is still JSON).")
def success_content_type_text_plain(ref: Reference) -> None:
    def text_plain(out: Outgoing) -> None:
        if not out.is_error:
            out.headers["content-type"] = "text/plain; charset=utf-8"

    ref.response_filters.append(text_plain)


@mutant("malformed-json-500", reqs=["CONV-JSON-CONTENT-TYPE"],
        doc="A request body that is not JSON escapes as an unhandled exception: 500 INTERNAL instead of a 4xx.")
def malformed_json_500(ref: Reference) -> None:
    def wrap(handler: Handler) -> Handler:
        def run(call: Call) -> Reply:
            json.loads(call.raw_body)
            return handler(call)
        return run

    wrap_handlers(ref, wrap, lambda op: op.takes_body)


@mutant("request-id-header-missing-on-errors", reqs=["CONV-REQUEST-ID-HEADER"],
        doc="Error answers have no x-request-id header (the body still carries requestId).")
def request_id_header_missing_on_errors(ref: Reference) -> None:
    def drop(out: Outgoing) -> None:
        if out.is_error:
            out.headers.pop("x-request-id", None)

    ref.response_filters.append(drop)


@mutant("request-id-constant", reqs=["CONV-REQUEST-ID-HEADER"],
        doc="Every answer carries the same request id (header and error body agree), so it names no request.")
def request_id_constant(ref: Reference) -> None:
    def constant(out: Outgoing) -> None:
        out.headers["x-request-id"] = "req_00000000"
        if out.is_error and isinstance(out.body, dict):
            out.body["requestId"] = "req_00000000"

    ref.response_filters.append(constant)


@mutant("org-id-needs-alias", reqs=["CONV-ORGID-UNCHANGED"],
        doc="Organization-scoped paths want an `org_`-prefixed alias: the id as issued is refused with 403 FORBIDDEN.")
def org_id_needs_alias(ref: Reference) -> None:
    original = ref.auth.authorize

    def authorize(principal: Principal, org_id: str, op: Operation) -> None:
        original(principal, org_id.removeprefix("org_") if org_id.startswith("org_") else "org_" + org_id, op)

    ref.auth.authorize = authorize  # type: ignore[method-assign]


@mutant("ids-returned-uppercased", reqs=["CONV-IDS-OPAQUE"],
        doc="Answers carry the resource `id` upper-cased, so the id as returned does not find the resource again.")
def ids_returned_uppercased(ref: Reference) -> None:
    def upper(out: Outgoing) -> None:
        if not out.is_error and isinstance(out.body, dict) and isinstance(out.body.get("id"), str):
            out.body["id"] = out.body["id"].upper()

    ref.response_filters.append(upper)


@mutant("naive-instants-accepted", reqs=["CONV-INSTANT-TIMEZONE"],
        doc="An instant filter without a timezone is accepted and read as UTC instead of 400 VALIDATION_ERROR.")
def naive_instants_accepted(ref: Reference) -> None:
    def wrap(handler: Handler) -> Handler:
        def run(call: Call) -> Reply:
            call.query_params = QueryParams(
                [(k, v + "Z" if _timezone_less(v) else v) for k, v in call.query_params.multi_items()])
            return handler(call)
        return run

    wrap_handlers(ref, wrap, lambda op: True)


@mutant("unit-amount-as-number", reqs=["CONV-MONEY-DECIMAL-STRING", "PROD-FIELDS"],
        doc="Products answer `unitAmount` as a JSON number (150.0) instead of a decimal string.")
def unit_amount_as_number(ref: Reference) -> None:
    def as_number(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "archived" in obj and isinstance(obj.get("unitAmount"), str):
                obj["unitAmount"] = float(obj["unitAmount"])

    ref.response_filters.append(as_number)


@mutant("balance-figures-as-numbers", reqs=["CONV-MONEY-DECIMAL-STRING"],
        doc="GET balance answers its figures as JSON numbers instead of decimal strings.")
def balance_figures_as_numbers(ref: Reference) -> None:
    def as_numbers(out: Outgoing) -> None:
        if not out.is_error and isinstance(out.body, dict) and "balances" in out.body:
            for obj in objects([out.body["balances"], out.body.get("provider")]):
                if isinstance(obj.get("amount"), str):
                    obj["amount"] = float(obj["amount"])

    ref.response_filters.append(as_numbers)


@mutant("payout-amounts-as-numbers", reqs=["CONV-MONEY-DECIMAL-STRING"],
        doc="Payouts answer `sourceAmount` and `destinationAmount` as JSON numbers instead of decimal strings.")
def payout_amounts_as_numbers(ref: Reference) -> None:
    def as_numbers(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "payoutId" in obj:
                for name in ("sourceAmount", "destinationAmount"):
                    if isinstance(obj.get(name), str):
                        obj[name] = float(obj[name])

    ref.response_filters.append(as_numbers)


@mutant("payout-amounts-without-currency", reqs=["CONV-MONEY-DECIMAL-STRING"],
        doc="Payouts answer `sourceAmount` and `destinationAmount` as decimal strings with no currency field beside "
            "them (`sourceCurrency` and `destinationCurrency` left out).")
def payout_amounts_without_currency(ref: Reference) -> None:
    def without_currency(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "payoutId" in obj:
                obj.pop("sourceCurrency", None)
                obj.pop("destinationCurrency", None)

    ref.response_filters.append(without_currency)
