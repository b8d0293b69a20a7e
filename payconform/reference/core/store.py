"""SQLite storage: the schema and a small, lock-guarded access layer.

One connection shared by the whole process, guarded by a re-entrant lock. Handlers are synchronous and
never await while holding it, so within the single asyncio thread a transaction (`with store.tx():`) is
atomic with respect to other requests; the lock also keeps the connection safe if a caller uses threads.
Every domain table is partitioned by (org_id, mode): a test key sees the sandbox, a live key live data.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS orgs (
    id TEXT PRIMARY KEY, verified INTEGER NOT NULL, payments_enabled INTEGER NOT NULL,
    suspended INTEGER NOT NULL, features TEXT NOT NULL, clock_offset REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, mode TEXT NOT NULL, public_id TEXT NOT NULL UNIQUE,
    key_hash TEXT NOT NULL, prefix TEXT NOT NULL, scopes TEXT NOT NULL, expires_at TEXT NOT NULL,
    pinned_ips TEXT NOT NULL, revoked_at TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency (
    org_id TEXT NOT NULL, mode TEXT NOT NULL, key TEXT NOT NULL, op_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL, state TEXT NOT NULL, status INTEGER, body TEXT, resource_id TEXT,
    created_at TEXT NOT NULL, PRIMARY KEY (org_id, mode, key));
CREATE INDEX IF NOT EXISTS idempotency_fp ON idempotency (org_id, mode, fingerprint, created_at);
CREATE TABLE IF NOT EXISTS audit_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, org_id TEXT NOT NULL, mode TEXT NOT NULL, action TEXT NOT NULL,
    resource_id TEXT, request_id TEXT NOT NULL, api_key_prefix TEXT, actor_user_id TEXT,
    outcome TEXT NOT NULL, error_type TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS recipients (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL,
    mode TEXT NOT NULL, name TEXT NOT NULL, email TEXT NOT NULL, phone TEXT, country TEXT NOT NULL,
    type TEXT NOT NULL, external_id TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    deleted_at TEXT);
CREATE TABLE IF NOT EXISTS payment_methods (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, recipient_id TEXT NOT NULL,
    org_id TEXT NOT NULL, mode TEXT NOT NULL, kind TEXT NOT NULL, currency TEXT NOT NULL,
    details TEXT NOT NULL, fingerprint TEXT NOT NULL, destination_account_id TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL, deleted_at TEXT);
CREATE TABLE IF NOT EXISTS products (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL,
    mode TEXT NOT NULL, name TEXT NOT NULL, currency TEXT NOT NULL, unit_amount TEXT NOT NULL,
    description TEXT, image_url TEXT, archived INTEGER NOT NULL DEFAULT 0,
    link_count INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    deleted_at TEXT);
CREATE TABLE IF NOT EXISTS links (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL,
    mode TEXT NOT NULL, product_id TEXT, items TEXT NOT NULL, currency TEXT NOT NULL,
    total_amount TEXT NOT NULL, status TEXT NOT NULL, expires_at TEXT, share_url TEXT,
    publish_error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, deleted_at TEXT);
CREATE TABLE IF NOT EXISTS checkout_payments (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL,
    mode TEXT NOT NULL, link_id TEXT NOT NULL, reference TEXT NOT NULL, client_reference_id TEXT,
    amount_base INTEGER NOT NULL, refunded_base INTEGER NOT NULL DEFAULT 0, decimals INTEGER NOT NULL,
    currency TEXT NOT NULL, status TEXT NOT NULL, scenario TEXT NOT NULL, disputed INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, UNIQUE (link_id, reference));
CREATE INDEX IF NOT EXISTS checkout_payments_reference ON checkout_payments (org_id, mode, reference);
CREATE TABLE IF NOT EXISTS checkout_refunds (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, payment_id TEXT NOT NULL,
    amount_base INTEGER NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkout_payment_transitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, payment_id TEXT NOT NULL, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    from_status TEXT, to_status TEXT NOT NULL, event TEXT NOT NULL, trigger TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS payouts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL,
    mode TEXT NOT NULL, reference TEXT NOT NULL, recipient_id TEXT NOT NULL,
    destination_account_id TEXT NOT NULL, source_amount TEXT NOT NULL, source_currency TEXT NOT NULL,
    destination_amount TEXT NOT NULL, destination_currency TEXT NOT NULL, fee_amount TEXT NOT NULL,
    fee_currency TEXT NOT NULL, rate TEXT NOT NULL, payment_reason TEXT, status TEXT NOT NULL,
    created_at TEXT NOT NULL, completed_at TEXT, scenario TEXT NOT NULL DEFAULT 'default',
    failure_code TEXT, funds_returned INTEGER, requires_funding INTEGER NOT NULL DEFAULT 0,
    step INTEGER NOT NULL DEFAULT 0, funding_hash TEXT UNIQUE, funded_at TEXT);
CREATE INDEX IF NOT EXISTS payouts_reference ON payouts (org_id, mode, reference);
CREATE TABLE IF NOT EXISTS payout_approvals (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    kind TEXT NOT NULL, status TEXT NOT NULL, required_approvals INTEGER NOT NULL, approvals INTEGER NOT NULL,
    amount TEXT NOT NULL, currency TEXT NOT NULL, destination_account_id TEXT, request TEXT NOT NULL,
    scopes TEXT NOT NULL, payout_id TEXT, error_type TEXT, created_at TEXT NOT NULL, expires_at TEXT NOT NULL,
    updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS approval_policies (
    org_id TEXT NOT NULL, mode TEXT NOT NULL, threshold TEXT, velocity_count INTEGER,
    velocity_window_seconds INTEGER, PRIMARY KEY (org_id, mode));
CREATE TABLE IF NOT EXISTS payout_transitions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, payout_id TEXT NOT NULL, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    event TEXT NOT NULL, from_status TEXT, to_status TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS payout_batches (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    external_reference_id TEXT NOT NULL, status TEXT NOT NULL, approval_id TEXT, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS payout_batches_reference ON payout_batches (org_id, mode, external_reference_id);
CREATE TABLE IF NOT EXISTS payout_batch_items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, batch_id TEXT NOT NULL,
    line INTEGER NOT NULL, body TEXT NOT NULL, status TEXT NOT NULL, errors TEXT, payout_id TEXT);
CREATE INDEX IF NOT EXISTS payout_batch_items_batch ON payout_batch_items (batch_id, status, seq);
CREATE TABLE IF NOT EXISTS payout_links (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, org_id TEXT NOT NULL, mode TEXT NOT NULL,
    source_amount TEXT NOT NULL, source_currency TEXT NOT NULL, destination_currency TEXT NOT NULL,
    country TEXT NOT NULL, reference TEXT NOT NULL, scopes TEXT NOT NULL, status TEXT NOT NULL, payout_id TEXT,
    error_type TEXT, expires_at TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS server_secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS balances (
    org_id TEXT NOT NULL, mode TEXT NOT NULL, currency TEXT NOT NULL, amount TEXT NOT NULL,
    PRIMARY KEY (org_id, mode, currency));
CREATE TABLE IF NOT EXISTS balance_transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, org_id TEXT NOT NULL, mode TEXT NOT NULL, type TEXT NOT NULL,
    amount TEXT NOT NULL, currency TEXT NOT NULL, fee TEXT NOT NULL, net TEXT NOT NULL,
    balance_after TEXT NOT NULL, order_id TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ledger_flags (
    org_id TEXT NOT NULL, mode TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (org_id, mode, name));
CREATE TABLE IF NOT EXISTS deposits (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, mode TEXT NOT NULL, amount TEXT NOT NULL, currency TEXT NOT NULL,
    status TEXT NOT NULL, created_at TEXT NOT NULL, completed_at TEXT);
"""


class Store:
    """Thin access layer: `one`, `all`, `run` and a re-entrant transaction."""

    def __init__(self, path: str = ":memory:") -> None:
        self._lock = threading.RLock()
        self._depth = 0
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        if path != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
            # a commit survives the process being killed (it is in the log before the commit returns); only a
            # power loss could undo the last ones. Without an fsync per commit a delivery costs a tenth.
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        # A request that was running when the process stopped never finished: nothing was recorded.
        self.conn.execute("DELETE FROM idempotency WHERE state = 'running'")

    @contextmanager
    def tx(self) -> Iterator[None]:
        """All statements inside commit together or not at all; nested blocks join the outer one."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self.conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException as exc:
                self._depth -= 1
                if outer:  # a refusal that is an outcome (`ApiError.keeps_writes`) keeps what was written
                    self.conn.execute("COMMIT" if getattr(exc, "keeps_writes", False) else "ROLLBACK")
                raise
            self._depth -= 1
            if outer:
                self.conn.execute("COMMIT")

    def one(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self._lock:
            return self.conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a write; returns the new rowid (the cursor of append-only tables)."""
        with self._lock:
            return self.conn.execute(sql, params).lastrowid or 0

    def close(self) -> None:
        with self._lock:
            self.conn.close()


def dumps(value: Any) -> str:
    """JSON for a TEXT column."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
