"""The deployment's own OpenAPI 3.1 document of the operations the spec names but does not show.

It is generated from the server's operation table (the routes as the deployment's choices placed them) and
from those choices (list envelopes, request field names), so the document and what the server answers cannot
differ. Each operation carries the spec's operationId; a list answer's schema names its array and cursor
properties, repeated in `x-pagination` so a reader need not guess which string is the cursor.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .choices import NOT_SHOWN, Choices
from .core.operation import Operation
from .resources.pricing import QUERY_FIELDS

Schema = dict[str, Any]
STRING: Schema = {"type": "string"}
DECIMAL: Schema = {"type": "string", "pattern": r"^\d+(\.\d+)?$", "description": "a decimal string"}
INSTANT: Schema = {"type": ["string", "null"], "format": "date-time"}
CURRENCY: Schema = {"type": "string", "example": "USD"}


def _object(properties: Mapping[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    schema: Schema = {"type": "object", "properties": dict(properties), "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


ORDER = {"destinationAccountId": STRING, "sourceAmount": DECIMAL, "sourceCurrency": CURRENCY,
         "destinationCurrency": CURRENCY, "reference": STRING, "paymentReason": STRING}
METHOD = _object({"kind": {"enum": ["fiat", "crypto"]}, "currency": CURRENCY,
                  "recipientDetails": {"type": "object", "description": "the corridor's account fields"}},
                 ("kind", "currency", "recipientDetails"))
LINK_ITEMS: Schema = {"type": "array", "minItems": 1, "items": _object(
    {"productId": STRING, "quantity": {"type": "integer", "minimum": 1}}, ("productId",))}


def _recipient(choices: Choices) -> Schema:
    contact = {"name": STRING, "email": {"type": "string", "format": "email"}, "phone": STRING,
               "country": {"type": "string", "minLength": 2, "maxLength": 2},
               "type": {"enum": ["individual", "business"]}, "externalId": {"type": ["string", "null"]}}
    return _object({**contact, choices.recipient_method_field: METHOD}, ("name", "email", "country", "type"))


# Request bodies of the operations whose body the spec does not show (or whose path it does not, with a body).
BODIES: Mapping[str, Callable[[Choices], Schema]] = {
    "pricePayout": lambda c: _object(
        {k: ORDER[k] for k in ("destinationAccountId", "sourceAmount", "sourceCurrency", "destinationCurrency")}
        | {"destinationAmount": DECIMAL},
        ("destinationAccountId", "sourceCurrency", "destinationCurrency")),
    "sendPayout": lambda c: _object({"quoteId": STRING, "reference": STRING, "expectDestination": DECIMAL,
                                     "paymentReason": STRING}, ("quoteId", "reference")),
    "fundSandbox": lambda c: _object({"amount": DECIMAL, "currency": CURRENCY}, ("amount", "currency")),
    "createBeneficiary": _recipient,
    "createPayoutLink": lambda c: _object(
        {k: ORDER[k] for k in ("sourceAmount", "sourceCurrency", "destinationCurrency", "reference")}
        | {"country": STRING, "expiresAt": INSTANT},
        ("sourceAmount", "sourceCurrency", "destinationCurrency", "reference")),
    "createCheckoutLink": lambda c: _object({"productId": STRING, "items": LINK_ITEMS, "expiresAt": INSTANT,
                                             "publish": {"type": "boolean"}}),
    "updateCheckoutLink": lambda c: _object({"productId": STRING, "items": LINK_ITEMS, "expiresAt": INSTANT}),
    "createPayout": lambda c: _object(ORDER, ("destinationAccountId", "sourceAmount", "sourceCurrency",
                                              "destinationCurrency", "reference")),
    "createPayoutBatch": lambda c: _object(
        {"externalReferenceId": STRING,
         "items": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": dict(ORDER)}}},
        ("externalReferenceId", "items")),
    "createSandboxWebhookEndpoint": lambda c: _object(
        {"url": {"type": "string", "format": "uri"}, "events": {"type": "array", "items": STRING}}, ("url",)),
    "refundCheckoutPayment": lambda c: _object(
        {"amount": {"type": "string", "pattern": r"^\d+$", "description": "base units; omitted: the rest"}}),
}

# Extra members of a list answer, besides its array and cursor.
PAGE_EXTRAS: Mapping[str, Schema] = {"listBalanceTransactions": {"hasMore": {"type": "boolean"}}}


def _parameters(op: Operation, choices: Choices) -> list[Schema]:
    params: list[Schema] = [{"name": name, "in": "path", "required": True, "schema": STRING}
                            for name in re.findall(r"{(\w+)}", op.path)]
    if op.op_id == "getIndicativeQuote":
        params += [{"name": name, "in": "query", "schema": STRING} for name in QUERY_FIELDS]
    if op.op_id == "listEvents":
        params += [{"name": name, "in": "query", "schema": STRING} for name in ("since", "type")]
    envelope = choices.envelope(op.op_id)
    if "envelope" in NOT_SHOWN[op.op_id] and envelope.cursor:
        params += [{"name": "cursor", "in": "query", "schema": STRING},
                   {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}}]
    if op.idempotency != "none":
        params.append({"name": "Idempotency-Key", "in": "header", "required": op.idempotency == "required",
                       "schema": {"type": "string", "pattern": r"^[A-Za-z0-9_.:-]{1,255}$"}})
    return params


def _list_answer(op_id: str, choices: Choices) -> tuple[Schema, Schema]:
    """(schema of the list answer, its `x-pagination`)."""
    envelope = choices.envelope(op_id)
    properties: dict[str, Schema] = {envelope.items: {"type": "array", "items": {"type": ["object", "string"]}}}
    pagination: Schema = {"items": envelope.items, "cursor": envelope.cursor}
    if envelope.cursor:
        properties[envelope.cursor] = {"type": "string", "description": "the next page's cursor (query `cursor`)"}
        pagination["cursorParam"] = "cursor"
    if op_id == "listEvents":  # the feed pages by the last event's `sequence`, sent back as `since`
        pagination.update(cursorParam="since", cursorFromItem="sequence")
    properties.update(PAGE_EXTRAS.get(op_id, {}))
    return {"type": "object", "properties": properties, "required": [envelope.items]}, pagination


def _operation(op: Operation, choices: Choices) -> Schema:
    described: Schema = {"operationId": op.op_id, "parameters": _parameters(op, choices)}
    answer: Schema = {"description": "success"}
    if "envelope" in NOT_SHOWN[op.op_id]:
        schema, pagination = _list_answer(op.op_id, choices)
        answer["content"] = {"application/json": {"schema": schema}}
        described["x-pagination"] = pagination
    body = BODIES.get(op.op_id)
    if body is not None:
        described["requestBody"] = {"required": op.op_id not in ("refundCheckoutPayment", "updateCheckoutLink"),
                                    "content": {"application/json": {"schema": body(choices)}}}
    described["responses"] = {"2XX": answer}
    return described


def document(operations: Mapping[str, Operation], choices: Choices, api_prefix: str) -> Schema:
    """The OpenAPI 3.1 document of the not-shown operations as this deployment serves them."""
    paths: dict[str, dict[str, Schema]] = {}
    for op_id in NOT_SHOWN:
        op = operations[op_id]
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, choices)
    return {
        "openapi": "3.1.0",
        "info": {"title": f"payconform reference sandbox ({choices.name} choices)", "version": "1",
                 "description": "The operations the service interface spec names but does not show, as this "
                                "deployment serves them."},
        "servers": [{"url": api_prefix}],
        "security": [{"apiKey": []}],
        "components": {"securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}}},
        "paths": dict(sorted(paths.items())),
    }
