"""Opaque, tamper-evident cursors, newest-first paging and the envelope of a list answer.

A cursor is bound to its list, organization, mode and filters and signed with a per-server secret, so a
tampered, truncated, foreign or filter-changed cursor is refused (400 naming `cursor`) instead of
silently restarting the list.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..core.clock import iso
from ..core.errors import field_error
from ..core.ids import same_signature
from ..core.store import Store

if TYPE_CHECKING:
    from ..choices import Choices
    from ..core.operation import Call, StoreServer


class ChoicesServer(Protocol):
    """The server as a list answer sees it: the deployment's choices name the envelope's keys."""

    choices: Choices


def page(call: Call[ChoicesServer], items: list[Any], next_cursor: str | None = None, **extra: Any) -> dict[str, Any]:
    """A list answer in the envelope the deployment chose for this operation: the array, `extra` (such as
    `hasMore`), then the next page's cursor when there is one and the list is paged."""
    envelope = call.ref.choices.envelope(call.op.op_id)
    body: dict[str, Any] = {envelope.items: items, **extra}
    if next_cursor and envelope.cursor:
        body[envelope.cursor] = next_cursor
    return body


class Cursors:
    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()[:24]

    def encode(self, scope: str, position: Any) -> str:
        payload = json.dumps({"s": scope, "p": position}, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(payload).decode().rstrip("=") + "." + self._sign(payload)

    def decode(self, scope: str, token: str) -> Any:
        try:
            data, signature = token.rsplit(".", 1)
            payload = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
            ok = same_signature(signature, self._sign(payload))
            decoded = json.loads(payload) if ok else None
        except (ValueError, UnicodeDecodeError):
            decoded = None
        if not isinstance(decoded, dict) or decoded.get("s") != scope:
            raise field_error("cursor", "was not issued for this list, organization and filters")
        return decoded["p"]


def by_seq(
    store: Store,
    cursors: Cursors,
    *,
    table: str,
    scope: str,
    where: str,
    params: Sequence[Any],
    limit: int,
    cursor: str | None,
    descending: bool = True,
) -> tuple[list[sqlite3.Row], str | None]:
    """One page of `table` rows in `seq` order (newest first when `descending`, else in insertion order) and the
    cursor of the next page, if any. `where` must already restrict to the organization and mode; `scope` must
    name them and the filters."""
    sql, args = f"SELECT * FROM {table} WHERE {where}", list(params)
    if cursor is not None:
        sql += " AND seq < ?" if descending else " AND seq > ?"
        args.append(int(cursors.decode(scope, cursor)))
    rows = store.all(sql + f" ORDER BY seq {'DESC' if descending else 'ASC'} LIMIT ?", (*args, limit + 1))
    if len(rows) <= limit:
        return rows, None
    return rows[:limit], cursors.encode(scope, rows[limit - 1]["seq"])


def by_id_newest_first(
    call: Call[StoreServer], *, table: str, where: list[str], args: list[Any], limit: int
) -> tuple[list[sqlite3.Row], str | None]:
    """Append-only tables whose row `id` is the cursor: rows strictly older than the cursor id.

    Applies the common filters too: `cursor` (must name a row of this organization and mode),
    `createdAfter` and `createdBefore` (inclusive, ISO 8601 with a timezone).
    """
    q = call.query
    where, args = ["org_id = ? AND mode = ?", *where], [call.org_id, call.mode, *args]
    cursor = q.get("cursor")
    if cursor is not None:
        owned = cursor.isdigit() and len(cursor) <= 18 and call.ref.store.one(
            f"SELECT 1 FROM {table} WHERE id = ? AND org_id = ? AND mode = ?", (int(cursor), call.org_id, call.mode)
        )
        if not owned:
            raise field_error("cursor", "was not issued for this organization")
        where.append("id < ?")
        args.append(int(cursor))
    for name, clause in (("createdAfter", "created_at >= ?"), ("createdBefore", "created_at <= ?")):
        instant = q.instant(name)
        if instant is not None:
            where.append(clause)
            args.append(iso(instant))
    rows = call.ref.store.all(
        f"SELECT * FROM {table} WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT ?", (*args, limit + 1)
    )
    if len(rows) <= limit:
        return rows, None
    return rows[:limit], str(rows[limit - 1]["id"])
