"""Answers checked against the response schemas of the OpenAPI documents in `contract/`, made tolerant.

The documents are read through `Contract` and validated with `jsonschema` (draft 2020-12, which OpenAPI 3.1
schemas are). Tolerant means no reading the spec allows fails:

- open to additional properties everywhere (Versioning rule 2: "Additions are backwards compatible and safe
  to ignore"), so any `additionalProperties` / `unevaluatedProperties` is dropped;
- nullable where the spec allows null: an OpenAPI 3.0 `nullable: true` becomes a type list with `null` (3.1
  type lists are JSON Schema already), and the properties of `NULLABLE` below are loosened where the
  document is stricter than the spec's prose;
- `required` only where the spec requires: the documents require only what the spec says is always there
  or what addresses the resource (their header says so; each `required` list was read against the prose and
  none is stricter);
- an enum the contract marks `x-versioning-added: enum-values` is open (rule 7 adds values to it; a
  client ignores the ones it does not know), so only its type is checked;
- `format: date-time` is an ISO 8601 instant with a time zone designator (Conventions; `rules.is_instant`).

A failure names the requirement (the test's `req` marker), the JSON path, what the target sent there, the
schema it broke (document, operation, status) and the x-request-id.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from payconform.suite import (
    OPENAPI_DOCUMENTS,
    Contract,
    ContractViolation,
    Exchange,
    failure_message,
    is_instant,
    run_contract,
    shorten,
)

URI = "urn:payconform:contract:"  # a document's base URI in the registry (`urn:payconform:contract:payouts`)
MAX_PROBLEMS = 8

# Where a document is stricter than the spec's prose (the prose is the truth), per component schema: the
# properties that may also be null, and why.
NULLABLE: dict[str, dict[str, str]] = {
    "Recipient": {
        "email": "Resources > Recipient names the field and gives no type; nothing says a recipient has one",
        "country": "Resources > Recipient names the field and gives no type; nothing says it is always set",
    },
    "PaymentMethod": {
        "destinationAccountId": "Resources > Recipient: `destinationAccountId` (per method), no type and no "
                                "rule that a method not yet `active` has one",
    },
}

FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time")
def _instant(value: object) -> bool:
    return not isinstance(value, str) or is_instant(value)


def _tolerant(node: Any, base: str) -> Any:
    """A copy of a schema node made tolerant (see the module's docstring), its local `$ref`s anchored at ``base``."""
    if isinstance(node, list):
        return [_tolerant(v, base) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _tolerant(v, base) for k, v in node.items()
           if k not in ("additionalProperties", "unevaluatedProperties", "nullable")}
    if isinstance(out.get("$ref"), str) and out["$ref"].startswith("#"):
        out["$ref"] = base + out["$ref"]
    if node.get("x-versioning-added") == "enum-values":
        out.pop("enum", None)
    return _nullable(out) if node.get("nullable") is True else out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _loosened(doc: dict[str, Any]) -> dict[str, Any]:
    """The tolerant document with the `NULLABLE` exceptions applied to its components."""
    components = (doc.get("components") or {}).get("schemas") or {}
    for name, props in NULLABLE.items():
        for prop in props:
            holder = (components.get(name) or {}).get("properties") or {}
            if prop in holder:
                holder[prop] = _nullable(holder[prop])
    return doc


_documents: dict[int, tuple[Any, dict[str, Any]]] = {}


def tolerant_document(contract: Contract, name: str) -> dict[str, Any]:
    """The OpenAPI document ``name`` made tolerant (built once per loaded document)."""
    raw = contract.openapi(name)
    cached = _documents.get(id(raw))
    if cached is None or cached[0] is not raw:
        cached = _documents[id(raw)] = (raw, _loosened(_tolerant(raw, URI + name)))
    return cached[1]


def _registry(contract: Contract) -> Registry:
    resources = [(URI + name, Resource.from_contents(tolerant_document(contract, name),
                                                     default_specification=DRAFT202012))
                 for name in OPENAPI_DOCUMENTS]
    return Registry().with_resources(resources)


def validator(contract: Contract, schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of a tolerant schema (its `$ref`s anchored), with the contract's documents to resolve them."""
    return Draft202012Validator(schema, registry=_registry(contract), format_checker=FORMATS)


def component(contract: Contract, name: str) -> tuple[str, dict[str, Any]]:
    """(document, tolerant schema) of the component schema ``name``; ``KeyError`` when no document has it."""
    for doc in OPENAPI_DOCUMENTS:
        schemas = (tolerant_document(contract, doc).get("components") or {}).get("schemas") or {}
        if name in schemas:
            return doc, schemas[name]
    raise KeyError(f"no OpenAPI document of contract/ has a component schema {name!r}")


def response_schema(contract: Contract, op_id: str, status: int) -> tuple[str, dict[str, Any]] | None:
    """(document, tolerant schema) of the JSON answer of ``op_id`` with ``status``: the status's own response,
    else its class (`2XX`), else for a success any success response the operation documents (a profile may
    accept another success status than the document lists). None when the document shows no JSON body."""
    found = contract.openapi_operation(op_id)
    if found is None:
        raise KeyError(f"no OpenAPI document of contract/ has an operation {op_id!r}")
    doc, op = found
    responses = {str(code).upper(): r for code, r in (op.get("responses") or {}).items()}
    keys = [str(status), f"{status // 100}XX"]
    if 200 <= status < 300:
        keys += sorted(k for k in responses if k.startswith("2"))
    for key in keys:
        response = responses.get(key) or {}
        for media, content in (response.get("content") or {}).items():
            if "json" in media and isinstance(content, dict) and "schema" in content:
                return doc, _tolerant(content["schema"], URI + doc)
    return None


def problems(contract: Contract, schema: dict[str, Any], value: Any) -> list[str]:
    """Each way ``value`` breaks the tolerant ``schema``: the JSON path, the rule broken and what was sent."""
    errors = sorted(validator(contract, schema).iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    return [f"at `{e.json_path}`: {shorten(e.message, 160)} (the target sent {shorten(json.dumps(e.instance), 120)})"
            for e in errors[:MAX_PROBLEMS]]


def _raise(ex: Exchange | None, expected: str, found: list[str]) -> None:
    if found:
        raise ContractViolation(failure_message(expected=expected, ex=ex, problems=found, show_body=ex is not None))


def expect_schema(ex: Exchange, op_id: str | None = None, *, contract: Contract | None = None) -> Any:
    """Fail unless the exchange's JSON body matches the tolerant response schema of ``op_id`` (default: the
    operation the exchange called) for its status. Returns the body."""
    contract = contract or run_contract()
    op_id = op_id or ex.op_id
    if op_id is None:
        raise ValueError("expect_schema: the exchange names no operation; pass op_id")
    unshown = contract.unshown_answers().get(op_id)
    if unshown is not None:
        # the spec does not show this answer: only the shape the profile entry reads it as may be demanded
        if not unshown.get("shape"):
            raise LookupError(f"suite defect: expect_schema on {op_id}, whose answer the spec does not show and "
                              f"whose profile entry `operations.{op_id}.response` names no `shape`")
        doc, schema = component(contract, str(unshown["shape"]))
        source = f"{unshown['shape']} of {doc}.openapi.yaml, as profile `operations.{op_id}.response` reads it " \
                 f"(the spec does not show this answer: {unshown.get('why')})"
    else:
        found = response_schema(contract, op_id, ex.status)
        if found is None:
            raise LookupError(f"expect_schema: {op_id} documents no JSON answer for {ex.status}")
        doc, schema = found
        source = f"{doc}.openapi.yaml"
    _raise(ex, f"the {op_id} {ex.status} answer as {source} describes it (open to added fields, null where the "
               "spec allows it)", problems(contract, schema, ex.json))
    return ex.json


def expect_component(ex: Exchange | None, value: Any, name: str, where: str, *,
                     contract: Contract | None = None) -> Any:
    """Fail unless ``value`` (found at ``where``, in the exchange's answer when one is given) matches the
    tolerant component schema ``name``. Returns ``value``."""
    contract = contract or run_contract()
    doc, schema = component(contract, name)
    _raise(ex, f"{where} as {doc}.openapi.yaml describes {name} (open to added fields, null where the spec "
               f"allows it)", problems(contract, schema, value))
    return value
