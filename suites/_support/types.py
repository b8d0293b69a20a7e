"""Types shared by the suites' helpers and tests."""

from __future__ import annotations

from collections.abc import Callable

Unique = Callable[[str], str]
"""The `unique` fixture: a fresh value with the given prefix, so that no two tests (or runs) collide."""
