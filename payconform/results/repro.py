"""A reproduction of a failed exchange: a curl command a person can paste, with no secret in it.

The API key travels as ``$PAYCONFORM_API_KEY`` (written ``"x-api-key:""$PAYCONFORM_API_KEY"``: two quoted
strings the shell joins, which the report's redaction, masking whatever follows ``x-api-key:`` up to a
quote, leaves readable). A Mode B signature cannot be replayed (nonce, timestamp): its headers are left out
and the command says so. Long bodies are cut, and the command says that too.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

API_KEY_HEADER = "x-api-key"
KEY_HEADER = f'"{API_KEY_HEADER}:""$PAYCONFORM_API_KEY"'
SIGNATURE_HEADERS = ("x-svc-signature", "x-svc-timestamp", "x-svc-nonce")
LEFT_OUT = ("content-length", "host", "accept-encoding", "connection", "user-agent")
MAX_REPRO_BODY = 2000


def env_key(command: str, masked: Iterable[str]) -> str:
    """``command`` with each masked form of the key header replaced by the environment variable."""
    for form in masked:
        command = command.replace(shlex.quote(f"{API_KEY_HEADER}: {form}"), KEY_HEADER)
    return command


def curl(method: str, url: str, headers: Iterable[tuple[str, str]], body: bytes = b"") -> str:
    """``curl -X METHOD URL -H ... --data-binary ...`` for one request; secrets must already be masked in
    the URL and the other headers (the caller's redactor runs over the result)."""
    parts = ["curl", "-sS", "-X", method, shlex.quote(url)]
    headers = list(headers)
    signed = any(name.lower() in SIGNATURE_HEADERS for name, _ in headers)
    for name, value in headers:
        lower = name.lower()
        if lower in LEFT_OUT or lower in SIGNATURE_HEADERS:
            continue
        # signed, x-api-key holds the signing key's id, not a secret
        parts += ["-H", KEY_HEADER if lower == API_KEY_HEADER and not signed else shlex.quote(f"{lower}: {value}")]
    text = body.decode("utf-8", "replace")
    if text:
        cut = len(text) > MAX_REPRO_BODY
        parts += ["--data-binary", shlex.quote(text[:MAX_REPRO_BODY])]
        if cut:
            parts.append(f"# body cut at {MAX_REPRO_BODY} characters")
    if signed:
        parts.append("# sent signed (Mode B): sign it afresh, the signature headers are left out")
    return " ".join(parts)
