"""Where a run's pacing file lives: a scratch file, or for a target the run did not start one file per target
under the user's cache directory, shared by every run against it (see ``payconform.pacing.pacer``)."""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

CACHE_VAR = "PAYCONFORM_CACHE_DIR"  # where the targets' pacing files live (default: $XDG_CACHE_HOME/payconform)
STALE_AFTER = 86400.0  # a target's pacing file untouched this long holds nothing of use: removed
SWEEP_EVERY = 3600.0  # the folder is swept for stale files at most this often (a run starts in well under 1 s)
SWEPT_MARK = ".swept"  # the folder's file whose modification time says when it was last swept


def new_db_path(directory: str | Path | None = None) -> Path:
    fd, name = tempfile.mkstemp(prefix="payconform-pacing-", suffix=".sqlite3", dir=directory)
    os.close(fd)
    return Path(name)


def cache_dir() -> Path:
    """payconform's directory under the user's cache (``PAYCONFORM_CACHE_DIR``, else ``$XDG_CACHE_HOME`` or
    ``~/.cache``)."""
    override = os.environ.get(CACHE_VAR)
    if override:
        return Path(override)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "payconform"


def target_db_path(base_url: str, directory: str | Path | None = None) -> Path:
    """The pacing file every run against ``base_url`` shares (under ``directory``, by default the cache's
    ``pacing/``), named by 16 hex digits of the SHA-256 of the URL (scheme and host in lower case, no trailing
slash); files of targets unused for a day are removed."""
    folder = Path(directory) if directory is not None else cache_dir() / "pacing"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    _sweep(folder)
    parts = urlsplit(base_url.strip())
    same = f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}?{parts.query}"
    digest = hashlib.sha256(same.encode("utf-8")).hexdigest()[:16]
    return folder / f"{digest}.sqlite3"


def _sweep(folder: Path) -> None:
    """Remove stale pacing files, unless the folder was swept within ``SWEEP_EVERY``: a cache that many runs
    against many targets filled holds thousands of files, and looking at each one at every start would cost
    more than the run."""
    mark = folder / SWEPT_MARK
    now = time.time()
    try:
        if now - mark.stat().st_mtime < SWEEP_EVERY:
            return
    except OSError:
        pass  # never swept
    mark.touch()
    _remove_stale(folder, now - STALE_AFTER)


def _remove_stale(folder: Path, before: float) -> None:
    """Remove the pacing files (with their write-ahead logs) none of whose parts changed since ``before``."""
    for db in folder.glob("*.sqlite3"):
        parts = [db, *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm"))]
        try:
            if max((p.stat().st_mtime for p in parts if p.exists()), default=before) < before:
                for part in parts:
                    part.unlink(missing_ok=True)
        except OSError:
            pass  # another run removed it first, or it is not ours to remove


def run_db_path(base_url: str | None, scratch: str | Path) -> Path:
    """A run's pacing file: the target's shared file (``target_db_path``), or a new file in ``scratch`` for a
    target the run started itself (``base_url`` None: nothing else sends to it) or when the cache directory
    cannot be written."""
    if base_url:
        try:
            return target_db_path(base_url)
        except OSError:
            pass
    return new_db_path(scratch)
