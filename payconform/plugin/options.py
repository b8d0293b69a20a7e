"""The plugin's command-line options (group "payconform"), built from the option table (``payconform.options``).

The target flags mirror the target file's fields, so a run can be described by flags alone; the fuzz flags
are read by ``payconform.fuzz.session``. Every option also answers to a ``--payconform-`` name, so a user's pytest
with other plugins always has an unambiguous spelling. ``--base-url`` belongs to pytest-base-url (which
pytest-playwright and pytest-selenium bring) when that plugin is present: registering it twice would break
every pytest run of the environment, so then payconform reads that plugin's option instead of adding its own.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from typing import Any

import pytest

from ..options import OPTIONS, TARGET_FLAGS
from ..target import flag_overrides

DEFAULT_TIMEOUT = 120  # seconds a conformance test may take unless it or the user says otherwise
BASE_URL_PLUGIN_NOTE = "; pytest-base-url's --base-url is read too when other target flags are given"
BASE_URL_PLUGIN = "base_url"  # pytest-base-url's plugin name; its option's dest is `base_url`


def base_url_plugin_present(pluginmanager: pytest.PytestPluginManager) -> bool:
    """Whether pytest-base-url registers ``--base-url`` in this pytest (loaded now, or loading after us)."""
    if pluginmanager.has_plugin(BASE_URL_PLUGIN):
        return True
    if pluginmanager.is_blocked(BASE_URL_PLUGIN) or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    return importlib.util.find_spec("pytest_base_url") is not None


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """The options of the table that pytest takes, each with the help ``payconform run --help`` shows; an
    internal knob works without a line in the help."""
    g = parser.getgroup("payconform", "payconform: contract conformance run against a target")
    for opt in OPTIONS:
        if not opt.in_pytest:
            continue
        names, text = opt.pytest_names, opt.help_text
        if opt.dest == "base_url" and base_url_plugin_present(pluginmanager):
            names, text = names[:1], text + BASE_URL_PLUGIN_NOTE
        kwargs: dict[str, Any] = {"dest": opt.pytest_dest, "help": argparse.SUPPRESS if opt.internal else text}
        if opt.action == "store":
            kwargs.update({k: v for k, v in (("metavar", opt.metavar), ("type", opt.type), ("choices", opt.choices))
                           if v is not None}, default=opt.default)
        elif opt.action == "store_const":
            kwargs.update(action=opt.action, const=opt.const)
        else:
            kwargs.update(action=opt.action, default=opt.default)
        g.addoption(*names, **kwargs)


def _flag(config: pytest.Config, name: str) -> Any:
    return config.getoption(TARGET_FLAGS[name].pytest_dest)


def base_url(config: pytest.Config) -> str | None:
    """The target's base URL from the command line: ours, or pytest-base-url's when other target flags say
    the run is a payconform run (that plugin's value may come from its ini or PYTEST_BASE_URL for a web app)."""
    own = config.getoption("payconform_base_url")
    if own or not config.pluginmanager.has_plugin(BASE_URL_PLUGIN):
        return own
    others = flag_overrides(lambda name: None if name == "base_url" else _flag(config, name))
    if config.getoption("payconform_target") or set(others) - {"rate_limit"}:
        return config.getoption("base_url", None) or None  # its configure sets "" from an empty ini
    return None


def target_overrides(config: pytest.Config) -> dict[str, Any]:
    """The target fields given as flags, to lay over the target file."""
    return flag_overrides(lambda name: base_url(config) if name == "base_url" else _flag(config, name))
