"""Command-line options of the plugin (group "payconform") and the defaults they stand for.

The target flags mirror the target file's fields, so a run can be described by flags alone; the fuzz flags
are read by ``payconform.fuzz``. Every option also answers to a ``--payconform-`` name, so a user's pytest
with other plugins always has an unambiguous spelling. ``--base-url`` belongs to pytest-base-url (which
pytest-playwright and pytest-selenium bring) when that plugin is present: registering it twice would break
every pytest run of the environment, so then payconform reads that plugin's option instead of adding its own.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from ..target import CREDENTIAL_NAMES, flag_overrides, option_name
from ..tiers import TIERS

DEFAULT_TIMEOUT = 120  # seconds a conformance test may take unless it or the user says otherwise
FUZZ_SEED = 20240601  # the fuzz phase's default seed: the same run generates the same cases


BASE_URL_PLUGIN = "base_url"  # pytest-base-url's plugin name; its option's dest is `base_url`


def base_url_plugin_present(pluginmanager: pytest.PytestPluginManager) -> bool:
    """Whether pytest-base-url registers ``--base-url`` in this pytest (loaded now, or loading after us)."""
    if pluginmanager.has_plugin(BASE_URL_PLUGIN):
        return True
    if pluginmanager.is_blocked(BASE_URL_PLUGIN) or os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    return importlib.util.find_spec("pytest_base_url") is not None


def _names(option: str) -> tuple[str, ...]:
    """``--payconform-X`` and the short ``--X`` of an option (one name when it is already namespaced)."""
    bare = option.removeprefix("--")
    return (option,) if bare.startswith("payconform-") else (f"--payconform-{bare}", option)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    g = parser.getgroup("payconform", "payconform: contract conformance run against a target")
    g.addoption(*_names("--target"), dest="payconform_target", metavar="FILE", default=None,
                help="target file (YAML or JSON): base_url, org ids, credentials, operator, profile, rate limits")
    base_url_help = "target base URL including /business/api/v1 (overrides the target file)"
    if base_url_plugin_present(pluginmanager):
        g.addoption("--payconform-base-url", dest="payconform_base_url", metavar="URL", default=None,
                    help=base_url_help + "; pytest-base-url's --base-url is read too when other target flags "
                                         "are given")
    else:
        g.addoption(*_names("--base-url"), dest="payconform_base_url", metavar="URL", default=None,
                    help=base_url_help)
    g.addoption(*_names("--org-id"), dest="payconform_org_id", metavar="ID", default=None,
                help="organization id the api keys belong to")
    g.addoption(*_names("--other-org-id"), dest="payconform_other_org_id", metavar="ID", default=None,
                help="an organization the api keys cannot access (for FORBIDDEN)")
    for name in CREDENTIAL_NAMES:
        what = "comma-separated equivalent read+write test keys" if name == "api_key_pool" else name.replace("_", " ")
        g.addoption(*_names(option_name(name)), dest=f"payconform_cred_{name}", metavar="VALUE", default=None,
                    help=f"credential {name} ({what}); env:NAME reads it from the environment")
    g.addoption(*_names("--operator-url"), dest="payconform_operator_url", metavar="URL", default=None,
                help="operator API of the reference server (http://host:port/_operator)")
    g.addoption(*_names("--operator-token"), dest="payconform_operator_token", metavar="TOKEN", default=None,
                help="x-operator-token for the operator API")
    g.addoption(*_names("--rate-limit"), dest="payconform_rate_limit", metavar="N", type=int, default=None,
                help="requests per minute per credential the run must stay under (default 100)")
    g.addoption(*_names("--webhook-listen"), dest="payconform_webhook_listen", metavar="HOST:PORT", default=None,
                help="address the webhook receiver listens on (webhooks.listen)")
    g.addoption(*_names("--webhook-public-url"), dest="payconform_webhook_public_url", metavar="URL", default=None,
                help="URL the target can reach the webhook receiver at (webhooks.public_url)")
    g.addoption(*_names("--run-slow"), dest="payconform_run_slow", action="store_true", default=False,
                help="run tests that wait in real time (needs real_time)")
    g.addoption(*_names("--keep-created"), dest="payconform_keep_created", action="store_true", default=False,
                help="leave what the run created in the target's organization (default: at the end, delete the "
                     "recipients and draft links and archive the products it made, one request each)")
    g.addoption(*_names("--select"), dest="payconform_select", metavar="EXPR", default=None,
                help="comma-separated requirement id globs (IDEM-*), part slugs (authentication) or test name "
                     "globs (test_links_walk); deselects the other conformance tests")
    g.addoption(*_names("--report-dir"), dest="payconform_report_dir", metavar="DIR", default=None,
                help="where results.json and index.html go (default reports/<UTC timestamp>)")
    g.addoption(*_names("--max-duration"), dest="payconform_max_duration", metavar="SECONDS", type=float,
                default=None, help="tests that would start after SECONDS are reported not run (exit code 1); "
                                   "default: no limit (payconform run sets one)")
    g.addoption("--payconform-embedded", dest="payconform_embedded", action="store_true", default=False,
                help="start the reference server, provision an organization and credentials, run against it")
    g.addoption("--payconform-mutant", dest="payconform_mutant", metavar="NAME", default=None,
                help="with --payconform-embedded: start the reference server with this mutant")
    g.addoption(*_names("--tier"), dest="payconform_tier", choices=list(TIERS), default=None,
                help="smoke (tests marked smoke: every part and catalog row, the pull-request gate), full "
                     "(every test, the default) or deep (full with --run-slow and a larger fuzz phase)")
    # read by payconform.fuzz (suites/fuzz); defaults in suites/fuzz/fuzz.yaml
    g.addoption(*_names("--fuzz-budget"), dest="payconform_fuzz_budget", metavar="N", type=int, default=None,
                help="fuzz phase: generated requests per operation (default 5); deeper runs cost more requests")
    g.addoption(*_names("--no-fuzz"), dest="payconform_fuzz_budget", action="store_const", const=0,
                help="no fuzz phase (the same as --fuzz-budget 0)")
    g.addoption(*_names("--fuzz-max-requests"), dest="payconform_fuzz_max_requests", metavar="N", type=int, default=None,
                help="fuzz phase: at most N requests in all (default: what the tier's request budget, or its "
                     "aimed floor at the keys' rate, leaves after the suites with the keys at hand, payconform.tiers), "
                     "split evenly over the operations, whichever worker runs them; an operation that used its "
                     "share stops")
    g.addoption(*_names("--fuzz-seed"), dest="payconform_fuzz_seed", metavar="N", type=int, default=FUZZ_SEED,
                help=f"fuzz phase: seed of the generated cases (default {FUZZ_SEED}); the same seed, budget and "
                     "target state generate the same cases")


def _flag(config: pytest.Config, name: str) -> Any:
    return config.getoption(f"payconform_cred_{name}" if name in CREDENTIAL_NAMES else f"payconform_{name}")


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
