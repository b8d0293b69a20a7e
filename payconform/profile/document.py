"""The deployment's OpenAPI document: read from a file, or fetched from the target's own host.

A URL is fetched through the harness's transport, with no credential, so the one guard applies: nothing is
sent off the target's host. The document is JSON or YAML whatever its name says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ..client import Api, SafetyError, TargetError
from ..context import RunContext
from ..target import Target, TargetConfigError

DOCUMENT_MAX_BODY = 16 * 1024 * 1024  # bytes: a deployment's whole API description, larger than any answer

class DocumentError(TargetConfigError):
    """The target's OpenAPI document cannot be read: the message says where and why."""


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def load(location: str, target: Target, *, run: RunContext | None = None) -> dict[str, Any]:
    """The document at ``location`` (a file path or a URL on ``target``'s host), parsed."""
    if is_url(location):
        text = _fetch(location, target, run)
    else:
        try:
            text = Path(location).read_text(encoding="utf-8")
        except OSError as exc:
            raise DocumentError(f"OpenAPI document {location}: cannot read it ({exc.strerror or exc})") from None
    return parse(text, location)


def parse(text: str, location: str) -> dict[str, Any]:
    """A JSON or YAML OpenAPI document (a mapping with ``paths``)."""
    try:
        doc = json.loads(text)
    except ValueError:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise DocumentError(f"OpenAPI document {location}: neither JSON nor YAML ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        raise DocumentError(f"OpenAPI document {location}: not an OpenAPI document (no `paths` mapping)")
    return doc


def _fetch(url: str, target: Target, run: RunContext | None) -> str:
    api = Api(target, None, run=run, max_body=DOCUMENT_MAX_BODY)
    try:
        ex = api.request("GET", url, credential=None, idempotency_key=None, raw=True)
    except SafetyError as exc:
        raise DocumentError(f"OpenAPI document {url}: {exc}") from None
    except TargetError as exc:
        first = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise DocumentError(f"OpenAPI document {url}: the target does not answer ({first})") from None
    finally:
        api.close()
    if ex.status != 200:
        raise DocumentError(f"OpenAPI document {url}: answered {ex.status} (x-request-id {ex.request_id})")
    if ex.truncated:
        raise DocumentError(f"OpenAPI document {url}: larger than the transport's body cap")
    return ex.text
