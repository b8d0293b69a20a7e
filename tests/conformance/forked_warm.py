"""Imported by the fork server of ``forked`` only: what every forked run would otherwise redo.

A run imports pytest's own plugins, the installed ones, payconform's plugin modules and the suites'
support package, loads the contract (the catalogs and the OpenAPI documents, parsed once per process by
``payconform.contract``), compiles the report template (one ``jinja2`` environment per process) and marks
the spec copy with the catalog's quotes (``spec.html``, once per process). A failed test's traceback asks
``inspect`` which module each frame's file belongs to, and its first question maps every loaded module's file
(thousands of ``realpath`` calls). Done here once, every run forked afterwards finds them in memory. A plugin
that a run disables (``-p no:``) is only imported here, never registered.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from importlib.metadata import entry_points

from _pytest.config import default_plugins

import payconform.plugin
import suites._support
from payconform.results import annotated, html as report
from payconform.contract import OPENAPI_DOCUMENTS, Contract


def _modules() -> list[str]:
    return [*(f"_pytest.{name}" for name in default_plugins),
            *(ep.module for ep in entry_points(group="pytest11")),
            *(f"payconform.plugin.{m.name}" for m in pkgutil.iter_modules(payconform.plugin.__path__)),
            *(f"suites._support.{m.name}" for m in pkgutil.iter_modules(suites._support.__path__)),
            "pdb", "payconform.reachability", "payconform.webhooks"]


for _module in _modules():
    importlib.import_module(_module)
_contract = Contract.load()
for _name in OPENAPI_DOCUMENTS:
    _contract.openapi(_name)
# the catalogs read on first use: checks by each report, transitions and events by the state and event tests
_catalogs = (_contract.checks(""), _contract.transitions, _contract.events)
inspect.getmodule(compile("", "<forked_warm>", "exec"))  # a file no module has: maps every module's file
report._environment().get_template("report.html.j2")
report._environment().get_template(annotated.TEMPLATE)
annotated.annotation(_contract)
