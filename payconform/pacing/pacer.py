"""Rate-limit pacing shared by every process of a run (xdist controller and workers).

A SQLite file records one row per request sent: the time and a SHA-256 prefix of the credential
(never the key itself). ``Pacer.acquire(credential)`` blocks until sending one more request keeps every
sliding window (61 s by default, one more than the limiter's 60 s) at or under ``fraction`` (all) of
``rate_limit`` for that credential and of ``ip_rate_limit`` for everything sent from this machine.
The check and the insert happen in one ``BEGIN IMMEDIATE`` transaction, so two processes cannot both
take the last slot. When the answer is in, ``settle()`` moves the row's time to then: the target counted
the request at some moment between the two, so a slot frees a window after the target could have counted
it, however long the request was delayed on the way (a loaded machine, a slow network). That is what lets
the run spend the whole limit: the only requests of the target's address it does not record are the
operator adapter's (its own API, outside the Limits) and other programs'.

Routes with a stricter row in the Limits table (balance history: 60 per minute per credential; batch
submission: 30 per minute, whose scope the spec does not give, so it is paced for the whole run) get a
budget of their own on top: ``acquire(credential, method, url)``. Credentials exempt from pacing, and
requests without a credential, are neither held to nor counted in those budgets (an exempt credential's sends
are recorded all the same, so that a rate-limit test knows what its credential's windows may hold).

A request sent inside ``urgent()`` (due within the sandbox's real time: a payout walk's read) takes its
credential's next free slot: while it waits, a row in ``urgent`` keeps one slot of the window for it, which
the other requests with that credential leave free.

The controller picks the file and hands its path to the workers (``workerinput``) or, for runs
without xdist, through the ``PAYCONFORM_PACING_DB`` environment variable. For a target the run did not start
itself the file outlives the run (``pacing_files.run_db_path``): one per target under the user's cache directory, named by
a hash of the base URL. The target's windows do not end with a run, so a run started right after another
(or beside it) on the same target and credentials counts what that one sent in the last window, and a
``Retry-After`` hold it met, instead of meeting a 429. The file holds send times, credential ids (hash
prefixes) and route names only: no key, no URL.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ENV_VAR = "PAYCONFORM_PACING_DB"
# The share of each limit the run spends: all of it, since every request of the run (the CLI's preflight
# too) is recorded and settled when its answer is in; the window is a second longer than the limiter's.
FRACTION = 1.0
ANONYMOUS = "-"
# the bucket prefix of an exempt credential's sends to a route with a row of its own: recorded (a rate-limit
# test counts them), never spent from the row's budget (a shared row's budget is the paced credentials')
EXEMPT_BUCKET = "!"
URGENT_POLL = 0.25  # seconds a request that leaves a slot to an urgent one waits before it looks again
_URGENT: ContextVar[bool] = ContextVar("payconform_urgent", default=False)


@contextlib.contextmanager
def urgent() -> Iterator[None]:
    """Requests sent inside the block take their credential's next free slot before other requests do."""
    token = _URGENT.set(True)
    try:
        yield
    finally:
        _URGENT.reset(token)


def credential_id(credential: str | None) -> str:
    """The stored identity of a credential: 16 hex digits of its SHA-256 (``-`` for no credential)."""
    if not credential:
        return ANONYMOUS
    return hashlib.sha256(credential.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class RouteLimit:
    """A Limits-table row that holds some routes to a budget of their own."""

    name: str
    method: str
    path: re.Pattern[str]
    per_minute: int
    per_credential: bool

    def matches(self, method: str, url: str) -> bool:
        return method.upper() == self.method and self.path.search(urlsplit(url).path) is not None


def route_limits(rows: Iterable[Mapping[str, Any]]) -> list[RouteLimit]:
    """The catalog's `rate_limits` rows that name their routes (`METHOD /path/{param}`)."""
    limits = []
    for row in rows:
        for route in row.get("routes") or []:
            method, template = route.split(" ", 1)
            pattern = re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "/?$")
            limits.append(RouteLimit(row["name"], method.upper(), pattern, int(row["per_minute"]),
                                     row.get("scope") == "credential"))
    return limits


class Pacer:
    def __init__(
        self,
        path: str | Path,
        rate_limit: int = 100,
        ip_rate_limit: int = 2000,
        *,
        window: float = 61.0,
        fraction: float = FRACTION,
        exempt: Iterable[str] = (),
        routes: Iterable[RouteLimit] = (),
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        max_wait: float = 300.0,
    ) -> None:
        self.path = str(path)
        self.window = float(window)
        self.per_credential = max(1, math.floor(rate_limit * fraction))
        self.per_ip = max(1, math.floor(ip_rate_limit * fraction))
        # Credentials that deliberately trip the limit (rate_limit_key): only the IP budget applies.
        self.exempt = {credential_id(c) for c in exempt if c}
        self.fraction = fraction
        self.routes = list(routes)
        self._clock = clock
        self._sleep = sleep
        self.max_wait = max_wait
        self._local = threading.local()
        # closed here, not left to the cycle collector (a connection and its statement cache refer to each other)
        with contextlib.closing(self._connect()) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS sends (ts REAL NOT NULL, cred TEXT NOT NULL,"
                         " bucket TEXT NOT NULL DEFAULT '')")
            conn.execute("CREATE INDEX IF NOT EXISTS sends_cred_ts ON sends (cred, ts)")
            conn.execute("CREATE INDEX IF NOT EXISTS sends_ts ON sends (ts)")
            conn.execute("CREATE TABLE IF NOT EXISTS holds (cred TEXT PRIMARY KEY, until REAL NOT NULL)")
            conn.execute("CREATE TABLE IF NOT EXISTS urgent (cred TEXT NOT NULL, until REAL NOT NULL)")

    def exempt_credential(self, credential: str) -> None:
        """Let a credential that a test trips on purpose skip its own budget; the IP budget still applies."""
        self.exempt.add(credential_id(credential))

    def _connect(self) -> sqlite3.Connection:
        """Write-ahead log, no fsync per commit: a rollback journal fsyncs each send (about 20 ms, as long as
        a request); the file is the run's scratch, worthless after a crash."""
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        return conn

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def acquire(self, credential: str | None, method: str = "", url: str = "") -> float:
        """Wait until a request with ``credential`` (to ``method url``, when given) fits every budget, record
        it, return seconds waited."""
        cred = credential_id(credential)
        # no credential: only the per-IP ceiling counts it (the route rows are per credential, or unscoped
        # but about the submissions of a client the target knows)
        route = None if cred == ANONYMOUS else self._route(method, url)
        conn = self._conn()
        started = self._clock()
        urgent = _URGENT.get() and cred != ANONYMOUS
        with self._waiting_urgently(cred) if urgent else contextlib.nullcontext():
            while True:
                wait = self._try(conn, cred, route, urgent=urgent)
                if wait <= 0:
                    return self._clock() - started
                if self._clock() - started + wait > self.max_wait:
                    raise TimeoutError(
                        f"pacing: waited {self._clock() - started:.0f}s for a slot under the rate limit; giving up"
                    )
                self._sleep(min(wait, 5.0))

    @contextlib.contextmanager
    def _waiting_urgently(self, cred: str) -> Iterator[None]:
        """A slot of ``cred``'s window kept for an urgent request while it waits (the row outlives a process
        that died waiting by no more than ``max_wait``)."""
        conn = self._conn()
        rowid = conn.execute("INSERT INTO urgent (cred, until) VALUES (?, ?)",
                             (cred, self._clock() + self.max_wait)).lastrowid
        try:
            yield
        finally:
            conn.execute("DELETE FROM urgent WHERE rowid = ?", (rowid,))

    def settle(self) -> None:
        """The answer to this thread's last acquired request is in (or it failed): its slot counts from now."""
        rowid = getattr(self._local, "pending", None)
        if rowid is None:
            return
        self._local.pending = None
        self._conn().execute("UPDATE sends SET ts = max(ts, ?) WHERE rowid = ?", (self._clock(), rowid))

    def _route(self, method: str, url: str) -> RouteLimit | None:
        return next((r for r in self.routes if r.matches(method, url)), None) if method else None

    def route(self, method: str, url: str) -> str | None:
        """The name of the Limits row with a budget of its own that ``method url`` spends, if any."""
        found = self._route(method, url)
        return found.name if found else None

    def exempts(self, credential: str | None) -> bool:
        """Whether ``credential`` skips its own budget (sent over its limit on purpose)."""
        return bool(credential) and credential_id(credential) in self.exempt

    def hold(self, credential: str | None, seconds: float) -> None:
        """A 429's ``Retry-After``: no process of the run sends with ``credential`` for ``seconds`` (an exempt
        credential, sent over its limit on purpose, is not held)."""
        cred = credential_id(credential)
        if cred in self.exempt:
            return
        self._conn().execute("INSERT INTO holds (cred, until) VALUES (?, ?) ON CONFLICT(cred) DO UPDATE SET"
                             " until = max(until, excluded.until)", (cred, self._clock() + seconds))

    def _try(self, conn: sqlite3.Connection, cred: str, route: RouteLimit | None = None, urgent: bool = False) -> float:
        """One attempt: 0 if recorded, else the seconds until a slot may free up. A request that is not
        ``urgent`` leaves a slot free for each urgent one waiting with the same credential."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = self._clock()
            horizon = now - self.window
            conn.execute("DELETE FROM sends WHERE ts <= ?", (now - max(10 * self.window, 600.0),))
            waits = []
            held = conn.execute("SELECT until FROM holds WHERE cred = ?", (cred,)).fetchone()
            if held and held[0] > now:
                waits.append(held[0] - now)
            total = conn.execute("SELECT COUNT(*) FROM sends WHERE ts > ?", (horizon,)).fetchone()[0]
            if total >= self.per_ip:
                # the slot frees when the (total - per_ip + 1)-th oldest send leaves the window
                row = conn.execute(
                    "SELECT ts FROM sends WHERE ts > ? ORDER BY ts LIMIT 1 OFFSET ?",
                    (horizon, total - self.per_ip),
                ).fetchone()
                waits.append(row[0] + self.window - now)
            if cred != ANONYMOUS and cred not in self.exempt:
                mine = conn.execute(
                    "SELECT COUNT(*) FROM sends WHERE cred = ? AND ts > ?", (cred, horizon)
                ).fetchone()[0]
                if mine >= self.per_credential:
                    row = conn.execute(
                        "SELECT ts FROM sends WHERE cred = ? AND ts > ? ORDER BY ts LIMIT 1 OFFSET ?",
                        (cred, horizon, mine - self.per_credential),
                    ).fetchone()
                    waits.append(row[0] + self.window - now)
                elif not urgent and mine + conn.execute("SELECT COUNT(*) FROM urgent WHERE cred = ? AND until > ?",
                                                        (cred, now)).fetchone()[0] >= self.per_credential:
                    waits.append(URGENT_POLL)
            exempt = cred in self.exempt
            if route is not None and not exempt:
                waits += self._route_wait(conn, cred, route, horizon, now)
            if waits:
                conn.execute("COMMIT")
                return max(max(waits), 0.001) + 0.001
            bucket = "" if route is None else EXEMPT_BUCKET + route.name if exempt else route.name
            self._local.pending = conn.execute("INSERT INTO sends (ts, cred, bucket) VALUES (?, ?, ?)",
                                               (now, cred, bucket)).lastrowid
            conn.execute("COMMIT")
            return 0.0
        except BaseException:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise

    def _route_wait(self, conn: sqlite3.Connection, cred: str, route: RouteLimit, horizon: float,
                    now: float) -> list[float]:
        """The wait the route's own budget imposes (none, or one entry)."""
        budget = max(1, math.floor(route.per_minute * self.fraction))
        where, args = ("bucket = ? AND ts > ?" + (" AND cred = ?" if route.per_credential else ""),
                       (route.name, horizon, *((cred,) if route.per_credential else ())))
        used = conn.execute(f"SELECT COUNT(*) FROM sends WHERE {where}", args).fetchone()[0]
        if used < budget:
            return []
        row = conn.execute(f"SELECT ts FROM sends WHERE {where} ORDER BY ts LIMIT 1 OFFSET ?",
                           (*args, used - budget)).fetchone()
        return [row[0] + self.window - now]

    def sent_after(self, credential: str | None, since: float, route: str | None = None) -> list[float]:
        """When the requests sent with ``credential`` (to the routes of the Limits row ``route``, exempt or
        not) after ``since`` were answered (or sent, while in flight), oldest first: what a target may still
        count in its window of that credential (a rate-limit test judges a 429 by it)."""
        where, args = "cred = ? AND ts > ?", [credential_id(credential), since]
        if route is not None:
            where, args = where + " AND bucket IN (?, ?)", [*args, route, EXEMPT_BUCKET + route]
        return [r[0] for r in self._conn().execute(f"SELECT ts FROM sends WHERE {where} ORDER BY ts", args)]

    def least_loaded(self, pool: Iterable[str]) -> str:
        """The key of ``pool`` with the fewest sends in the current window (first on ties)."""
        keys = list(pool)
        if not keys:
            raise ValueError("least_loaded: empty pool")
        horizon = self._clock() - self.window
        ids = {credential_id(k): k for k in keys}
        counts = dict(
            self._conn().execute(
                f"SELECT cred, COUNT(*) FROM sends WHERE ts > ? AND cred IN ({','.join('?' * len(ids))}) GROUP BY cred",
                (horizon, *ids),
            ).fetchall()
        )
        return min(keys, key=lambda k: counts.get(credential_id(k), 0))

    def timestamps(self, credential: str | None = None) -> list[float]:
        """Recorded send times (for the whole IP, or one credential); for tests and diagnostics."""
        if credential is None:
            rows = self._conn().execute("SELECT ts FROM sends ORDER BY ts").fetchall()
        else:
            rows = self._conn().execute(
                "SELECT ts FROM sends WHERE cred = ? ORDER BY ts", (credential_id(credential),)
            ).fetchall()
        return [r[0] for r in rows]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class NoPacer:
    """Stand-in when pacing is disabled."""

    def acquire(self, credential: str | None, method: str = "", url: str = "") -> float:
        return 0.0

    def settle(self) -> None:
        pass

    def least_loaded(self, pool: Iterable[str]) -> str:
        keys = list(pool)
        if not keys:
            raise ValueError("least_loaded: empty pool")
        return keys[0]

    def route(self, method: str, url: str) -> str | None:
        return None

    def hold(self, credential: str | None, seconds: float) -> None:
        pass

    def exempts(self, credential: str | None) -> bool:
        return False

    def sent_after(self, credential: str | None, since: float, route: str | None = None) -> None:
        """Nothing is recorded: unknown (None)."""
        return None

    def close(self) -> None:
        pass


def for_target(path: str | Path, target: Any, rate_limit_rows: Iterable[Mapping[str, Any]]) -> Pacer:
    """The run's pacer on ``path`` for ``target``: its limits, its ``rate_limit_key`` exempt (the rate-limit
    tests trip its limit on purpose), the routes of the Limits rows (``rate_limit_rows``) budgeted apart."""
    exempt = [target.credential("rate_limit_key")] if target.credential("rate_limit_key") else []
    return Pacer(path, target.rate_limit, target.ip_rate_limit, exempt=exempt, routes=route_limits(rate_limit_rows))

