"""Folding a target's OpenAPI document into its profile, once per run."""

from __future__ import annotations

from typing import Any

from ..context import RunContext
from ..target import Target
from .document import DocumentError, load
from .openapi import Mapped, map_document

__all__ = ["DocumentError", "default_profile", "fold_document", "read_document"]


def default_profile() -> dict[str, Any]:
    """contract/profile.default.yaml, with no target's overrides."""
    from ..contract import Contract

    return Contract.load().profile


def read_document(target: Target, *, run: RunContext | None = None) -> Mapped:
    """What the target's OpenAPI document implies for the default profile (empty without a document)."""
    if not target.openapi:
        return Mapped()
    return map_document(load(target.openapi, target, run=run), default_profile(), target.base_url)


def fold_document(target: Target, *, run: RunContext | None = None) -> list[str]:
    """Merge what the target's OpenAPI document implies under the target file's own ``profile:`` and drop the
    document from ``target``: the run reads it once, and the target file its workers load carries the result.
    Answers the notes on what the document lacks; ``DocumentError`` when it cannot be read."""
    from ..contract import deep_merge

    mapped = read_document(target, run=run)
    target.profile = deep_merge(mapped.overrides, target.profile)
    target.openapi = None
    return mapped.notes
