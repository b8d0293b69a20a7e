"""The last line of defence for secrets: scan every file a run wrote for the target's secrets.

Secrets are redacted at the source (transcripts, failure messages, tracebacks); this scan proves it for
each run. A secret found fails the run and names the file and which secret (by its kind, never its value).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MIN_SECRET = 8  # shorter values would match by chance; every real secret is far longer
PEM_LINE = 40  # a private key is looked for by its base64 lines, which survive any re-wrapping of the header


@dataclass(frozen=True)
class Leak:
    path: Path
    kind: str  # "svc_test_…" style prefix of the secret, never its value


def _kind(secret: str) -> str:
    if "PRIVATE KEY" in secret:
        return "a private key (PEM)"
    return secret[: secret.find("_", 4) + 1] + "…" if secret.startswith(("svc_", "akid_")) else "a secret"


def _needles(secret: str) -> list[bytes]:
    if "PRIVATE KEY" in secret:
        lines = [ln.strip() for ln in secret.splitlines() if len(ln.strip()) >= PEM_LINE and "-----" not in ln]
        return [ln.encode() for ln in lines]
    return [secret.encode()] if len(secret) >= MIN_SECRET else []


def find_leaks(directory: Path, secrets: Iterable[str]) -> list[Leak]:
    """Every (file, secret kind) where a file under ``directory`` holds one of ``secrets``."""
    needles = [(needle, _kind(s)) for s in set(secrets) if isinstance(s, str) for needle in _needles(s)]
    leaks: list[Leak] = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        kinds = sorted({kind for needle, kind in needles if needle in data})
        leaks += [Leak(path, kind) for kind in kinds]
    return leaks
