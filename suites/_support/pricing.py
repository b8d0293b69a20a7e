"""Quotes and sends for the pricing suites, through the profile.

The spec names `pricePayout`, `sendPayout`, `getIndicativeQuote` and `listCorridors` but shows neither
their paths nor their bodies: every path, body and field used here (the quote's id field, where the
`RegEDisclosure` and the corridor `capabilities` sit, the fee and the quote lifetime) is the profile's
(`operations` and `sandbox.pricing`), so a failure on them reads "your deployment differs from the profile".
"""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, Contract, Exchange, expect, expect_status, fill

from .profile import corridors, items, success
from .types import Scope, shared_scope

_CAPABILITIES: dict[Scope, dict[str, dict[str, Any]]] = {}  # per organization and mode: the corridors' capabilities


def pricing(contract: Contract) -> dict[str, Any]:
    return contract.profile["sandbox"]["pricing"]


def price_body(contract: Contract, destination: str, **fields: Any) -> dict[str, Any]:
    """The profile's `pricePayout` body to `destination`; `fields` override (None removes a field)."""
    body = fill(contract.operation("pricePayout").get("body") or {}, {"destinationAccountId": destination})
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


def quote(api: Api, contract: Contract, destination: str, **fields: Any) -> Exchange:
    """A sendable quote (2xx, carrying the profile's quote id field)."""
    ex = api.op("pricePayout", json=price_body(contract, destination, **fields))
    expect_status(ex, success(contract, "pricePayout"), "pricing a payout")
    field = pricing(contract)["quote_id"]
    expect(isinstance(ex.json, dict) and isinstance(ex.json.get(field), str), f"the quote carries no `{field}`", ex)
    return ex


def send(api: Api, contract: Contract, quoted: dict[str, Any], reference: str, **fields: Any) -> Exchange:
    """`sendPayout` of a quote under `reference`, expecting what the quote says arrives unless `fields`
    say otherwise."""
    body = fill(contract.operation("sendPayout").get("body") or {},
                {"quoteId": quoted[pricing(contract)["quote_id"]], "unique": reference})
    body["expectDestination"] = quoted.get("destinationAmount", body.get("expectDestination"))
    body.update(fields)
    return api.op("sendPayout", json=body)


def capabilities(api: Api, contract: Contract) -> dict[str, dict[str, Any]]:
    """Destination currency -> the corridor's `capabilities`, from `listCorridors`: the target's configuration,
    read once per worker, organization and mode."""
    shared = shared_scope(api)
    if shared not in _CAPABILITIES:
        ex = api.op("listCorridors")
        expect_status(ex, 200, "listing the corridors")
        field = pricing(contract)["capabilities"]
        _CAPABILITIES[shared] = {c.get("currency"): c.get(field) or {} for c in items(contract, "listCorridors", ex)
                                 if isinstance(c, dict)}
    return _CAPABILITIES[shared]


def corridor_where(api: Api, contract: Contract, capability: str, value: bool) -> str | None:
    """The profile corridor whose `capabilities[capability]` is `value` on the target, if any."""
    caps = capabilities(api, contract)
    return next((name for name, row in corridors(contract).items()
                 if caps.get(row["currency"], {}).get(capability) is value), None)
