"""What the shapes' reference server did with each shape's webhook deliveries, read from its database after
the runs: so that a shape run which waited in vain for a delivery says whether the sender was slow (lag), or
failed a live receiver (attempts retried before they succeeded), or was never asked; and the hosts outside
this machine it was asked to deliver to (none may be: nothing calls an outside host at run time).

The project's tests may read the reference's database; the suite never does (it shares only HTTP with it).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from payconform.reachability import is_loopback

LAG = ("(julianday(last_attempt_at) - julianday(created_at)) * 86400"
       " FROM webhook_deliveries WHERE org_id = ? AND status = 'succeeded' AND attempts = 1")


def _quantiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    at = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "max": 1.0}
    return {k: round(values[max(0, round(len(values) * q) - 1)], 1) for k, q in at.items()} if values else {}


def summary(db: Path, orgs: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Per shape (its organization): endpoints, events, deliveries by status, seconds from queueing to a first
    attempt that succeeded (its clock: an operator's moves stretch it), deliveries that succeeded only on a
    retry, and the errors of failed attempts."""
    out: dict[str, dict[str, Any]] = {}
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        for shape, org in orgs.items():
            def one(sql: str) -> Any:
                return conn.execute(sql, (org,)).fetchone()[0]

            out[shape] = {
                "endpoints": one("SELECT COUNT(*) FROM webhook_endpoints WHERE org_id = ?"),
                "events": one("SELECT COUNT(*) FROM events WHERE org_id = ?"),
                "deliveries": dict(conn.execute("SELECT status, COUNT(*) FROM webhook_deliveries WHERE org_id = ?"
                                                " GROUP BY status", (org,)).fetchall()),
                "first-attempt lag s": _quantiles([r[0] for r in conn.execute("SELECT " + LAG, (org,))]),
                "succeeded on a retry": one("SELECT COUNT(*) FROM webhook_deliveries WHERE org_id = ?"
                                            " AND status = 'succeeded' AND attempts > 1"),
                "errors": dict(conn.execute("SELECT last_error, COUNT(*) FROM webhook_deliveries WHERE org_id = ?"
                                            " AND last_error IS NOT NULL GROUP BY last_error", (org,)).fetchall()),
            }
    return out


def outside_hosts(db: Path) -> list[str]:
    """The hosts outside this machine that some organization's webhook endpoint on the server points at."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        hosts = {urlsplit(url).hostname or url for (url,) in conn.execute("SELECT DISTINCT url FROM webhook_endpoints")}
    return sorted(h for h in hosts if not is_loopback(h))
