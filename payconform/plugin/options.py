"""Command-line options of the plugin (group "payconform") and the defaults they stand for.

The target flags mirror the target file's fields, so a run can be described by flags alone; the fuzz flags
are read by ``payconform.fuzz``.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..target import CREDENTIAL_NAMES, flag_overrides, option_name

DEFAULT_TIMEOUT = 120  # seconds a conformance test may take unless it or the user says otherwise
FUZZ_SEED = 20240601  # the fuzz phase's default seed: the same run generates the same cases


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("payconform", "payconform: contract conformance run against a target")
    g.addoption("--target", dest="payconform_target", metavar="FILE", default=None,
                help="target file (YAML or JSON): base_url, org ids, credentials, operator, profile, rate limits")
    g.addoption("--base-url", dest="payconform_base_url", metavar="URL", default=None,
                help="target base URL including /business/api/v1 (overrides the target file)")
    g.addoption("--org-id", dest="payconform_org_id", metavar="ID", default=None,
                help="organization id the api keys belong to")
    g.addoption("--other-org-id", dest="payconform_other_org_id", metavar="ID", default=None,
                help="an organization the api keys cannot access (for FORBIDDEN)")
    for name in CREDENTIAL_NAMES:
        what = "comma-separated equivalent read+write test keys" if name == "api_key_pool" else name.replace("_", " ")
        g.addoption(option_name(name), dest=f"payconform_cred_{name}", metavar="VALUE", default=None,
                    help=f"credential {name} ({what}); env:NAME reads it from the environment")
    g.addoption("--operator-url", dest="payconform_operator_url", metavar="URL", default=None,
                help="operator API of the reference server (http://host:port/_operator)")
    g.addoption("--operator-token", dest="payconform_operator_token", metavar="TOKEN", default=None,
                help="x-operator-token for the operator API")
    g.addoption("--rate-limit", dest="payconform_rate_limit", metavar="N", type=int, default=None,
                help="requests per minute per credential the run must stay under (default 100)")
    g.addoption("--run-slow", dest="payconform_run_slow", action="store_true", default=False,
                help="run tests that wait in real time (needs real_time)")
    g.addoption("--select", dest="payconform_select", metavar="EXPR", default=None,
                help="comma-separated requirement id globs (IDEM-*) or part slugs (authentication); "
                     "deselects the other conformance tests")
    g.addoption("--report-dir", dest="payconform_report_dir", metavar="DIR", default=None,
                help="where results.json and index.html go (default reports/<UTC timestamp>)")
    g.addoption("--payconform-embedded", dest="payconform_embedded", action="store_true", default=False,
                help="start the reference server, provision an organization and credentials, run against it")
    g.addoption("--payconform-mutant", dest="payconform_mutant", metavar="NAME", default=None,
                help="with --payconform-embedded: start the reference server with this mutant")
    # read by payconform.fuzz (suites/fuzz); defaults in suites/fuzz/fuzz.yaml
    g.addoption("--fuzz-budget", dest="payconform_fuzz_budget", metavar="N", type=int, default=None,
                help="fuzz phase: generated requests per operation (default 5); deeper runs cost more requests")
    g.addoption("--fuzz-max-requests", dest="payconform_fuzz_max_requests", metavar="N", type=int, default=None,
                help="fuzz phase: at most N requests in all (split evenly over the xdist workers); the rest of the "
                     "fuzz phase is skipped")
    g.addoption("--fuzz-seed", dest="payconform_fuzz_seed", metavar="N", type=int, default=FUZZ_SEED,
                help=f"fuzz phase: seed of the generated cases (default {FUZZ_SEED}); the same seed, budget and "
                     "target state generate the same cases")


def target_overrides(config: pytest.Config) -> dict[str, Any]:
    """The target fields given as flags, to lay over the target file."""
    return flag_overrides(lambda name: config.getoption(
        f"payconform_cred_{name}" if name in CREDENTIAL_NAMES else f"payconform_{name}"))
