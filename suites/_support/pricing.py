"""Quotes and sends for the pricing suites, through the profile.

The spec names `pricePayout`, `sendPayout`, `getIndicativeQuote` and `listCorridors` but shows neither
their paths nor their bodies: every path, body and field used here (the quote's id field, where the
`RegEDisclosure` and the corridor `capabilities` sit, the fee and the quote lifetime) is the profile's
(`operations` and `sandbox.pricing`), so a failure on them reads "your deployment differs from the profile".
"""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, Contract, Exchange, ProfileMismatch, expect, expect_status, fill

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
    read once per worker, organization and mode. A row names its currency in the profile's `corridor_key`; rows
    that all lack it are the profile's mismatch (`corridor_mismatch`)."""
    shared = shared_scope(api)
    if shared not in _CAPABILITIES:
        ex = api.op("listCorridors")
        expect_status(ex, 200, "listing the corridors")
        field, key = pricing(contract)["capabilities"], corridor_key(contract)
        rows = [c for c in items(contract, "listCorridors", ex) if isinstance(c, dict)]
        if rows and not any(key in c for c in rows):
            corridor_mismatch(contract, rows, ex)
        _CAPABILITIES[shared] = {c.get(key): c.get(field) or {} for c in rows}
    return _CAPABILITIES[shared]


def corridor_key(contract: Contract) -> str:
    """The field of a `listCorridors` row that names its currency (profile `sandbox.pricing.corridor_key`)."""
    return str(pricing(contract).get("corridor_key") or "currency")


def corridor_mismatch(contract: Contract, rows: list[dict[str, Any]], ex: Exchange) -> None:
    """Raise the `ProfileMismatch` of corridor rows without the profile's `corridor_key`, naming the field whose
    values are the profile's corridor currencies where one is (the override that fits)."""
    key, currencies = corridor_key(contract), {row.get("currency") for row in corridors(contract).values()}
    fits = sorted(name for name in {n for c in rows for n in c}
                  if {c.get(name) for c in rows} & currencies and all(isinstance(c.get(name), str) for c in rows))
    named = f"; rows carry {', '.join(f'`{n}`' for n in fits)}" if fits else ""
    raise ProfileMismatch("sandbox.pricing.corridor_key", f"no listCorridors row names its currency in `{key}`{named}",
                          expected=key, exchange=ex,
                          override={"sandbox": {"pricing": {"corridor_key": fits[0]}}} if len(fits) == 1 else None)


def corridor_where(api: Api, contract: Contract, capability: str, value: bool) -> str | None:
    """The profile corridor whose `capabilities[capability]` is `value` on the target, if any."""
    caps = capabilities(api, contract)
    return next((name for name, row in corridors(contract).items()
                 if caps.get(row["currency"], {}).get(capability) is value), None)
