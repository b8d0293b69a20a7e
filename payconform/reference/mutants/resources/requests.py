"""Mutants of the Resources part for API keys, recipients, idempotency records and error bodies.

Each changes one rule of one server instance through the patch points of `reference.py`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable

from ...authentication.auth import KeyRecord
from ...core.responses import Outgoing
from ..registry import mutant
from ..support.requests import key_row, objects

if TYPE_CHECKING:
    from ...reference import Reference


def _drop_field(ref: Reference, error_type: str, field: str) -> None:
    def drop(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict) and out.body.get("type") == error_type:
            out.body.pop(field, None)

    ref.response_filters.append(drop)


def _error_filter(ref: Reference, change: Callable[[dict], Any]) -> None:
    """Apply ``change(body)`` to every error body on its way out."""
    def apply(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            change(out.body)

    ref.response_filters.append(apply)


@mutant("error-body-retryable", reqs=["ERRBODY-NO-RETRYABLE"],
        doc="Error bodies carry a `retryable` field, which the spec says does not exist.")
def error_body_retryable(ref: Reference) -> None:
    def add(out: Outgoing) -> None:
        if out.is_error and isinstance(out.body, dict):
            out.body["retryable"] = out.status >= 500 or out.status == 429

    ref.response_filters.append(add)


@mutant("key-format-padded-secret", reqs=["KEY-FORMAT"],
        doc="Keys are issued with a padded 44-character secret (`=` appended), not a 43-character base64url one.")
def key_format_padded_secret(ref: Reference) -> None:
    issue, find_key = ref.auth.issue, ref.auth.find_key

    def padded(*args: object, **kwargs: object) -> tuple[KeyRecord, str]:
        key, raw = issue(*args, **kwargs)  # type: ignore[arg-type]
        return key, raw + "="

    def find(raw: str | None) -> KeyRecord | None:
        return find_key(raw[:-1] if raw and raw.endswith("=") else raw)

    ref.auth.issue = padded  # type: ignore[method-assign]
    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("key-format-uppercase-public-id", reqs=["KEY-FORMAT"],
        doc="Keys are issued with the 32-character public id in upper-case hex, not lowercase.")
def key_format_uppercase_public_id(ref: Reference) -> None:
    issue, find_key = ref.auth.issue, ref.auth.find_key
    parts = re.compile(r"^(svc_(?:test|live)_)([0-9a-fA-F]{32})(_.*)$", re.DOTALL)

    def shouting(*args: object, **kwargs: object) -> tuple[KeyRecord, str]:
        key, raw = issue(*args, **kwargs)  # type: ignore[arg-type]
        head, public_id, secret = parts.match(raw).groups()  # type: ignore[union-attr]
        return key, head + public_id.upper() + secret

    def find(raw: str | None) -> KeyRecord | None:
        match = parts.match(raw or "")
        return find_key(match.group(1) + match.group(2).lower() + match.group(3) if match else raw)

    ref.auth.issue = shouting  # type: ignore[method-assign]
    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("key-prefix-ignored", reqs=["KEY-PREFIX-IN-CREDENTIAL"],
        doc="A key is found by its public id and secret alone: without its `svc_test_` prefix, or with the other "
            "mode's prefix, it still authenticates.")
def key_prefix_ignored(ref: Reference) -> None:
    find_key = ref.auth.find_key
    loose = re.compile(r"^(?:svc_(?:test|live)_)?([0-9a-f]{32})_([A-Za-z0-9_-]{43})$")

    def find(raw: str | None) -> KeyRecord | None:
        match = loose.match(raw or "")
        key = key_row(ref, match.group(1)) if match else None
        return find_key(f"{key.prefix}_{match.group(2)}") if key and match else find_key(raw)

    ref.auth.find_key = find  # type: ignore[method-assign]


@mutant("key-default-expiry-two-years", reqs=["KEY-EXPIRY-DEFAULT", "KEY-EXPIRY-LIMIT"],
        doc="A key issued without an expiry lives two years instead of one.")
def key_default_expiry_two_years(ref: Reference) -> None:
    ref.auth.default_expiry_years = 2


@mutant("key-expiry-max-unchecked", reqs=["KEY-EXPIRY-MAX", "KEY-EXPIRY-LIMIT"],
        doc="A key may be issued to expire ten years from now; the two-year maximum is not enforced.")
def key_expiry_max_unchecked(ref: Reference) -> None:
    ref.auth.max_expiry_years = 10


@mutant("dup-guard-without-original-key", reqs=["ERRBODY-ORIGINAL-KEY", "DUP-ORIGINAL-KEY"],
        doc="DUPLICATE_REQUEST_DETECTED does not name the originalIdempotencyKey.")
def dup_guard_without_original_key(ref: Reference) -> None:
    _drop_field(ref, "DUPLICATE_REQUEST_DETECTED", "originalIdempotencyKey")


@mutant("dup-guard-without-original-payout", reqs=["DUP-ORIGINAL-PAYOUT"],
        doc="DUPLICATE_REQUEST_DETECTED does not name the originalPayoutId of a first request that paid.")
def dup_guard_without_original_payout(ref: Reference) -> None:
    _drop_field(ref, "DUPLICATE_REQUEST_DETECTED", "originalPayoutId")


@mutant("dup-original-key-executes-again", reqs=["DUP-ORIGINAL-KEY"],
        doc="Money writes are never replayed: resending the original key pays again.")
def dup_original_key_executes_again(ref: Reference) -> None:
    lookup = ref.idempotency.lookup

    def no_money_replay(scope: tuple[str, str], key: str):
        record = lookup(scope, key)
        return None if record is not None and ref.operations[record["op_id"]].money_write else record

    ref.idempotency.lookup = no_money_replay  # type: ignore[method-assign]


@mutant("error-status-as-string", reqs=["ERRBODY-STATUS-MATCHES"],
        doc="Error bodies carry `status` as a string (\"404\") instead of an integer.")
def error_status_as_string(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(status=str(body["status"])))


@mutant("error-detail-null", reqs=["ERRBODY-SHAPE"], doc="Error bodies carry `detail: null` instead of a string.")
def error_detail_null(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(detail=None))


@mutant("error-type-lowercase", reqs=["ERRBODY-TYPE-BRANCH"],
        doc="Error bodies carry the `type` in lower case (`not_found`), which is no documented type.")
def error_type_lowercase(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(type=str(body["type"]).lower()))


@mutant("error-resolution-object", reqs=["ERRBODY-RESOLUTION"],
        doc="Error bodies carry `resolution` as an object instead of a string.")
def error_resolution_object(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.update(resolution={"action": "fix the request and retry"}))


@mutant("validation-errors-missing", reqs=["ERRBODY-ERRORS-FIELDS"],
        doc="VALIDATION_ERROR bodies carry no `errors` array naming the fields that failed.")
def validation_errors_missing(ref: Reference) -> None:
    _error_filter(ref, lambda body: body.pop("errors", None) if body.get("type") == "VALIDATION_ERROR" else None)


@mutant("recipient-type-uppercase", reqs=["RCP-FIELDS"],
        doc="Recipients answer `type` upper-cased (`INDIVIDUAL`) instead of `individual` or `business`.")
def recipient_type_uppercase(ref: Reference) -> None:
    def upper(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "paymentMethods" in obj and isinstance(obj.get("type"), str):
                obj["type"] = obj["type"].upper()

    ref.response_filters.append(upper)


@mutant("recipient-type-always-individual", reqs=["RCP-FIELDS"],
        doc="Recipients answer `type: individual` whatever was sent: a business reads as an individual.")
def recipient_type_always_individual(ref: Reference) -> None:
    def individual(out: Outgoing) -> None:
        for obj in objects(out.body):
            if "paymentMethods" in obj and obj.get("type") == "business":
                obj["type"] = "individual"

    ref.response_filters.append(individual)


@mutant("method-kind-bank", reqs=["RCP-METHOD-FIELDS"],
        doc="A recipient's `paymentMethods[].kind` is answered as `bank` instead of `fiat` or `crypto`.")
def method_kind_bank(ref: Reference) -> None:
    def bank(out: Outgoing) -> None:
        for obj in objects(out.body):
            for method in obj.get("paymentMethods") or []:
                method["kind"] = "bank"

    ref.response_filters.append(bank)


@mutant("method-status-uppercase", reqs=["RCP-METHOD-FIELDS"],
        doc="A recipient's `paymentMethods[].status` is answered upper-cased (`ACTIVE`) instead of `active`, "
            "`pending` or `failed`.")
def method_status_uppercase(ref: Reference) -> None:
    def upper(out: Outgoing) -> None:
        for obj in objects(out.body):
            for method in obj.get("paymentMethods") or []:
                method["status"] = str(method.get("status")).upper()

    ref.response_filters.append(upper)
