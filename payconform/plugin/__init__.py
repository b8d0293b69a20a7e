"""The payconform pytest plugin (entry point ``payconform.plugin``), one module per concern, as in ``_pytest``:

- ``options``: the command-line options (group "payconform", from the table in ``payconform.options``) and the
  default test timeout (``DEFAULT_TIMEOUT``);
- ``session``: the run's state (target, contract, pacer, operator, embedded server) and handing it to xdist
  workers;
- ``markers``: ``req`` and ``needs``, which tests are conformance tests (``is_suite_path``), ``--select``, the
  default timeout and skipping by ``needs``;
- ``order``: the order tests go to the workers (each module spread over the run, so waits overlap sending);
- ``recording``: each test's record and its transport from the workers to the controller;
- ``endings``: how a run ends early (the target stopped answering, ``--max-duration``, an interrupt) and the
  "not run" rows of the tests it left; the directory the controller shares with its workers (``Run.run_dir``);
- ``summary``: ``results.json``, ``index.html``, ``summary.md``, the report header and the terminal summary;
- ``progress``: a line now and then on a long run: parts done, requests spent of the plan, time left;
- ``waits``: a test that times out says what it was waiting for (``payconform.waits``);
- ``fixtures``: ``run``, ``target``, ``contract``, ``run_slow`` (session); ``api``, ``api_as``, ``anon``, ``operator``, ``clock``,
  ``fresh_org``, ``own_org``, ``unique``, ``webhook_receiver``, ``webhook_receiver_factory`` (function);
  ``webhook_server`` (session).

The plugin is active for tests under a ``suites/`` directory, and for every test when a target is given.
Inactive, it changes nothing (the project's own ``tests/`` are unaffected).
"""

from __future__ import annotations

import importlib
from typing import Any

# Registered with this package. Each module comes after those it imports, so pytest imports (and rewrites) it
# itself; hooks of equal priority run last-registered first (a test's record is current before it is skipped).
pytest_plugins = [
    "payconform.plugin.options",
    "payconform.plugin.session",
    "payconform.plugin.markers",
    "payconform.plugin.order",
    "payconform.plugin.recording",
    "payconform.plugin.endings",
    "payconform.plugin.summary",
    "payconform.plugin.progress",
    "payconform.plugin.waits",
    "payconform.plugin.fixtures",
]

# The public names and the module that owns each.
_PUBLIC = {
    "DEFAULT_TIMEOUT": "options",
    "STATE": "session",
    "is_suite_path": "markers",
    "needs": "markers",
    "requirement_ids": "markers",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first use: importing the modules here, before pytest
    registers them from ``pytest_plugins``, would keep pytest from rewriting their asserts (it warns)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
