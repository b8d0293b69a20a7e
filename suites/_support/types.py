"""Types shared by the suites' helpers and tests."""

from __future__ import annotations

from collections.abc import Callable

from payconform.suite import Api

Unique = Callable[[str], str]
"""The `unique` fixture: a fresh value with the given prefix, so that no two tests (or runs) collide."""

Scope = tuple[str, str | None, bool]
"""Where an object the run's tests share lives: base URL, organization, live mode (`shared_scope`, `runwide`)."""


def shared_scope(api: Api) -> Scope:
    """The scope of what `api` makes: a test-mode object is not seen with a live key, nor in another
    organization; the key itself is left out (every key of the organization's mode sees it)."""
    return api.base_url, api.org_id, str(api.credential or "").startswith("svc_live_")
