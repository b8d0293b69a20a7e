"""Setup the tests of a whole run share: made once in the run, read by every xdist worker.

What tests only read (a recipient to pay, a product to make links from, a sample's answer, a payout walked in
real time) cost its requests once per worker while each worker kept its own. Here a value is made once per run
and scope: the first worker to ask makes it holding an exclusive `fcntl.flock` on the value's lock file in the
run's directory (`Run.run_dir`); a worker asking meanwhile waits on that lock, then reads what was
made; a worker asking later reads the value's file without waiting. A flock dies with its process, so an
interrupted maker leaves no stale lock (the next to ask makes the value), and a make that fails stores nothing.
Without a run directory (pytest without the plugin's run) a value is shared within the process only. Values
are JSON (`exchange_json`/`exchange_of` carry an exchange, its credentials left out).

The rows a make creates are the run's, not the maker's: `making()` tells the cleanup (`leftovers`), which
leaves them to the end of the whole run.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx

from payconform.suite import SENSITIVE_HEADERS, Exchange, RequestInfo

from .types import Scope

T = TypeVar("T")
_local: dict[str, Any] = {}  # what this process made or read (the only store without a run directory)
_dir: Path | None = None
_guard = threading.RLock()  # this process's threads, which share `_local` (flock holds the other processes off)
_making = threading.local()


def use(run_dir: str | Path | None) -> None:
    """Share through `run_dir` from now on (None: within this process only); forget what this process held."""
    global _dir
    with _guard:
        _local.clear()
        _dir = Path(run_dir) / "runwide" if run_dir else None
        if _dir is not None:
            _dir.mkdir(exist_ok=True)


def making() -> bool:
    """Whether this thread is making a run-wide value now (what its requests create belongs to the run)."""
    return getattr(_making, "depth", 0) > 0


def shared(scope: Scope, name: str, make: Callable[[], T], enough: Callable[[T], bool] = lambda _: True) -> T:
    """The run's value `name` in `scope`: `make()` the first time any worker asks, read from then on. A value
    `enough` rejects (a walk with fewer reads a step than this caller needs) is made anew and replaces it."""
    return shared_together(scope, {name: enough}, lambda names: {name: make()})[name]


def shared_together(scope: Scope, wanted: Mapping[str, Callable[[Any], bool]],
                    make: Callable[[list[str]], Mapping[str, Any]]) -> dict[str, Any]:
    """The run's values named in `wanted` (name -> its `enough`), as `shared` gives one: those no worker has
    made (or made enough of) are made by one `make(names)` call that returns each of them (payouts walked
    together in real time, side by side instead of one after another), under the locks of all of them, taken
    in name order."""
    keys = {name: _key(scope, name) for name in wanted}
    out: dict[str, Any] = {}

    def take(name: str, local: bool) -> bool:
        found = _local.get(keys[name], _MISSING) if local else _read(keys[name])
        if found is _MISSING or not wanted[name](found):
            return False
        out[name] = _local[keys[name]] = found
        return True

    missing = sorted(n for n in wanted if not take(n, True) and not take(n, False))
    if not missing:
        return out
    with ExitStack() as locks:
        for name in missing:
            locks.enter_context(_locked(keys[name]))
        still = [n for n in missing if not take(n, False)]
        if still:
            made = _made(lambda: make(still))
            for name in still:
                out[name] = _local[keys[name]] = _write(keys[name], made[name])
    return out


def update(scope: Scope, name: str, change: Callable[[Any], T]) -> T:
    """The run's value `name` in `scope` replaced by `change(old)` (old: None the first time), under the lock:
    a count every worker adds to. What `change` sends belongs to the run."""
    key = _key(scope, name)
    with _locked(key):
        old = _read(key)
        new = _write(key, _made(lambda: change(None if old is _MISSING else old)))
        _local[key] = new
        return new


def exchange_json(ex: Exchange) -> dict[str, Any]:
    """An exchange as JSON, without the headers that carry credentials (`redact.SENSITIVE_HEADERS`)."""
    return {"request": {"method": ex.request.method, "url": ex.request.url,
                        "headers": _headers(ex.request.headers), "content": _b64(ex.request.content)},
            "status": ex.status, "headers": _headers(ex.headers), "content": _b64(ex.content),
            "elapsed": ex.elapsed, "op_id": ex.op_id, "attempts": ex.attempts, "truncated": ex.truncated,
            "reason": ex.reason, "http_version": ex.http_version}


def exchange_of(data: dict[str, Any]) -> Exchange:
    """The exchange `exchange_json` wrote."""
    sent = data["request"]
    request = RequestInfo(sent["method"], sent["url"], httpx.Headers(sent["headers"]),
                          base64.b64decode(sent["content"]))
    return Exchange(request, data["status"], httpx.Headers(data["headers"]), base64.b64decode(data["content"]),
                    data["elapsed"], data["op_id"], data["attempts"], truncated=data["truncated"],
                    reason=data["reason"], http_version=data["http_version"])


_MISSING = object()


def _key(scope: Scope, name: str) -> str:
    return hashlib.sha256(json.dumps([list(scope), name]).encode()).hexdigest()[:32]


def _made(make: Callable[[], T]) -> T:
    _making.depth = getattr(_making, "depth", 0) + 1
    try:
        return make()
    finally:
        _making.depth -= 1


@contextmanager
def _locked(key: str) -> Iterator[None]:
    """The value's exclusive lock: this process's threads first, then the run's other processes (flock)."""
    with _guard:
        if _dir is None:
            yield
            return
        with open(_dir / f"{key}.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _read(key: str) -> Any:
    if _dir is None:
        return _local.get(key, _MISSING)
    try:
        return json.loads((_dir / f"{key}.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _MISSING


def _write(key: str, value: Any) -> Any:
    """The value as every reader gets it (through JSON, in the maker too), written whole, then renamed into
    place: a reader without the lock never sees half a value."""
    text = json.dumps(value)
    if _dir is not None:
        part = _dir / f"{key}.{os.getpid()}.{threading.get_ident()}.part"
        part.write_text(text, encoding="utf-8")
        os.replace(part, _dir / f"{key}.json")
    return json.loads(text)


def _headers(headers: httpx.Headers) -> list[list[str]]:
    return [[k, v] for k, v in headers.multi_items() if k.lower() not in SENSITIVE_HEADERS]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
