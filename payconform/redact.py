"""Secret redaction for transcripts, logs, results and reports.

One ``Redactor`` masks every secret it was told about (credentials, the operator token, signing keys)
and anything shaped like one even if it was never registered:

- API keys ``svc_test_<32 hex>_<43 base64url>`` / ``svc_live_...`` -> ``svc_test_****`` (prefix kept);
- webhook secrets ``whsec_...`` -> ``whsec_****``; signing key ids ``akid_test_...`` -> ``akid_test_****``;
- PEM private key blocks -> ``-----BEGIN PRIVATE KEY-----****-----END PRIVATE KEY-----``;
- values of the ``x-api-key``, ``x-operator-token``, ``authorization`` (and cookie) headers, in header
  mappings and in text such as ``x-api-key: ...`` or ``"x-api-key": "..."``;
- JSON string fields named like a secret (``secret``, ``token``, ``password``, ``privateKey``, ...).

Mode B signatures (``X-Svc-Signature``) and ``payloadToSign`` are shown: a signature is bound to one nonce
or one challenge, both single use, and the malformed-signature tests are read by their signatures.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Iterable, Mapping

MASK = "****"

SENSITIVE_HEADERS = frozenset(
    {"x-api-key", "x-operator-token", "authorization", "proxy-authorization", "cookie", "set-cookie"}
)
SENSITIVE_FIELDS = frozenset(
    {
        "secret",
        "token",
        "password",
        "privatekey",
        "private_key",
        "signingsecret",
        "signing_secret",
        "signing_private_key",
        "private_key_pem",
        "operator_token",
        "webhooksecret",
        "apikey",
        "api_key",
    }
)

# Anywhere, not only at a word's start: "%3Dsvc_test_..." (a key URL-encoded after "=") is masked too.
_KEY_RE = re.compile(r"(svc_(?:test|live)_)[A-Za-z0-9_\-]+")
_WHSEC_RE = re.compile(r"(whsec_)[A-Za-z0-9+/=_\-]+")
_AKID_RE = re.compile(r"(akid_(?:test|live)_)[A-Za-z0-9_\-]+")
_PEM_RE = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----.*?-----END \1-----", re.DOTALL
)
# Possibly JSON-escaped PEM (newlines as "\n" inside a string), or a truncated block.
_PEM_OPEN_RE = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY)-----(?!\*\*\*\*)[^\"']*")
_HEADER_TEXT_RE = re.compile(
    r"(?i)(\b(?:x-api-key|x-operator-token|authorization|proxy-authorization|cookie|set-cookie)"
    r"[\"']?\s*[:=]\s*[\"']?)([^\"'\r\n,}]+)"
)
_FIELD_TEXT_RE = re.compile(
    r"(?i)(\"(?:" + "|".join(sorted(SENSITIVE_FIELDS)) + r")\"\s*:\s*\")((?:[^\"\\]|\\.)*)(\")"
)


_SHAPES = (_KEY_RE, _WHSEC_RE, _AKID_RE)  # each masks a match as its prefix and MASK, as `_mask_known` does

# What every secret shape below contains: a text without any of these has nothing for them to mask, and is
# searched once instead of by each of them (most strings of a report hold no secret).
_SHAPED_RE = re.compile(
    r"(?i)-----BEGIN |svc_|whsec_|akid_|x-api-key|x-operator-token|authorization|cookie|\"(?:"
    + "|".join(sorted(SENSITIVE_FIELDS)) + r")\""
)


def _mask_key(match: re.Match) -> str:
    return match.group(1) + MASK


class Redactor:
    """Masks known secrets and secret-shaped strings. Thread-safe; callable: ``redactor(text)``."""

    def __init__(self, secrets: Iterable[Any] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._unshaped: set[str] = set()  # the secrets no shape below masks whole: only the pattern finds them
        self._pattern: re.Pattern | None = None
        self.add(*secrets)

    def add(self, *secrets: Any) -> None:
        """Register more secrets (strings, or lists/dicts of them). Short values (< 6 chars) are ignored.

        A secret of a known shape (an API key, a webhook secret, a signing key id) is masked by its shape, the
        same way, so the pattern of registered secrets holds only the others (operator tokens, private keys)
        and is rebuilt, on the next ``redact``, only when one of those is added: a run issues keys one at a
        time, and a long-lived process (the project's kill matrix) adds thousands."""
        with self._lock:
            added = {s for s in _flatten(secrets) if isinstance(s, str) and len(s) >= 6} - self._secrets
            self._secrets |= added
            unshaped = {s for s in added if not any(shape.fullmatch(s) for shape in _SHAPES)}
            if unshaped:
                self._unshaped |= unshaped
                self._pattern = None

    def _compiled(self) -> re.Pattern | None:
        with self._lock:
            if self._pattern is None and self._unshaped:
                self._pattern = re.compile(_trie_regex(self._unshaped))
            return self._pattern

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(self._secrets)

    @staticmethod
    def _mask_known(value: str) -> str:
        for prefix in ("svc_test_", "svc_live_", "akid_test_", "akid_live_", "whsec_"):
            if value.startswith(prefix):
                return prefix + MASK
        if "PRIVATE KEY-----" in value:
            return "-----BEGIN PRIVATE KEY-----" + MASK + "-----END PRIVATE KEY-----"
        return MASK

    def redact(self, text: Any) -> str:
        """The text with every secret masked. Non-strings are converted with ``str()``."""
        if text is None:
            return ""
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", errors="replace")
        elif not isinstance(text, str):
            text = str(text)
        pattern = self._compiled()
        if pattern is not None:
            text = pattern.sub(lambda m: self._mask_known(m.group(0)), text)
        if not _SHAPED_RE.search(text):
            return text
        text = _PEM_RE.sub(lambda m: f"-----BEGIN {m.group(1)}-----{MASK}-----END {m.group(1)}-----", text)
        text = _PEM_OPEN_RE.sub(lambda m: f"-----BEGIN {m.group(1)}-----{MASK}", text)
        text = _KEY_RE.sub(_mask_key, text)
        text = _WHSEC_RE.sub(_mask_key, text)
        text = _AKID_RE.sub(_mask_key, text)
        text = _HEADER_TEXT_RE.sub(lambda m: m.group(1) + self._header_mask(m.group(2)), text)
        text = _FIELD_TEXT_RE.sub(lambda m: m.group(1) + MASK + m.group(3), text)
        return text

    __call__ = redact

    def _header_mask(self, value: str) -> str:
        value = value.strip()
        if value.endswith(MASK):
            return value  # already masked with its prefix kept
        for prefix in ("svc_test_", "svc_live_", "akid_test_", "akid_live_"):
            if value.startswith(prefix):
                return prefix + MASK
        if value.lower().startswith("bearer "):
            return "Bearer " + MASK
        return MASK

    def headers(self, headers: Any) -> dict[str, str]:
        """A header mapping (or list of pairs) as a plain dict with sensitive values masked."""
        items = headers.items() if hasattr(headers, "items") else headers
        out: dict[str, str] = {}
        for name, value in items:
            if isinstance(name, bytes):
                name = name.decode("latin-1")
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            if name.lower() in SENSITIVE_HEADERS:
                out[name] = self._header_mask(str(value))
            else:
                out[name] = self.redact(value)
        return out

    def obj(self, value: Any) -> Any:
        """Redact a JSON-like structure: strings are redacted, secret-named fields masked."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, Mapping):
            out = {}
            for k, v in value.items():
                lk = str(k).lower()
                if (lk in SENSITIVE_FIELDS or lk in SENSITIVE_HEADERS) and isinstance(v, str):
                    out[k] = self._mask_known(v) if v else v
                else:
                    out[k] = self.obj(v)
            return out
        if isinstance(value, (list, tuple)):
            return [self.obj(v) for v in value]
        return value


def _trie_regex(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, the longest where several start at one place, built as a trie
    (``(?:abc(?:d)?|x...)``): tried at each place of a text it follows one path of shared prefixes instead of
    trying every word, which keeps a redactor of thousands of secrets fast."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _node_regex(trie)


def _node_regex(node: dict[str, dict]) -> str:
    branches = []
    for ch in sorted(k for k in node if k):
        run, child = [ch], node[ch]
        while len(child) == 1 and "" not in child:  # a chain without branches: one literal
            ((nxt, child),) = child.items()
            run.append(nxt)
        branches.append(re.escape("".join(run)) + _node_regex(child))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body  # greedy: a longer word first


def _flatten(values: Iterable[Any]):
    for v in values:
        if v is None:
            continue
        if isinstance(v, str):
            yield v
        elif isinstance(v, Mapping):
            yield from _flatten(v.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            yield from _flatten(v)


# The process-wide redactor: the plugin registers the target's secrets into it.
_default = Redactor()


def default() -> Redactor:
    return _default


def redact(text: Any) -> str:
    return _default.redact(text)
