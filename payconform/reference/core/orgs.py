"""Organizations: the flags the operator sets and the API's access rules read."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from . import ids
from .clock import iso
from .store import Store, dumps

FLAGS = ("verified", "payments_enabled", "suspended")


@dataclass(frozen=True)
class Org:
    id: str
    verified: bool
    payments_enabled: bool
    suspended: bool
    features: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "orgId": self.id,
            "verified": self.verified,
            "payments_enabled": self.payments_enabled,
            "suspended": self.suspended,
            "features": list(self.features),
        }


def get_org(store: Store, org_id: str) -> Org | None:
    row = store.one("SELECT * FROM orgs WHERE id = ?", (org_id,))
    if row is None:
        return None
    return Org(
        id=row["id"],
        verified=bool(row["verified"]),
        payments_enabled=bool(row["payments_enabled"]),
        suspended=bool(row["suspended"]),
        features=tuple(json.loads(row["features"])),
    )


def create_org(store: Store, flags: dict[str, bool], features: list[str], now: datetime,
               new_id: Callable[[], str] = ids.org_id) -> Org:
    org_id = new_id()
    store.run(
        "INSERT INTO orgs (id, verified, payments_enabled, suspended, features, created_at) VALUES (?,?,?,?,?,?)",
        (org_id, flags["verified"], flags["payments_enabled"], flags["suspended"], dumps(features), iso(now)),
    )
    org = get_org(store, org_id)
    assert org is not None
    return org


def update_org(store: Store, org_id: str, flags: dict[str, bool], features: list[str] | None) -> None:
    for name, value in flags.items():
        store.run(f"UPDATE orgs SET {name} = ? WHERE id = ?", (value, org_id))
    if features is not None:
        store.run("UPDATE orgs SET features = ? WHERE id = ?", (dumps(features), org_id))
