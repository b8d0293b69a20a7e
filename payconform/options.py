"""The command-line options of ``payconform run`` and ``check`` and of the pytest plugin, declared once.

``payconform.cli.parser`` builds the argparse arguments from ``OPTIONS``, ``payconform.plugin.options`` the
pytest options, and ``payconform run`` hands what it was given to its pytest run with ``pytest_args``, so a
shared option has one spelling, one help text and one value on both command lines. Help texts state no
figure a run computes (a request budget, a count per key): the run's header prints those. This module does
not import pytest: the command line loads it without starting a pytest run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .target.fields import CREDENTIAL_NAMES, option_name
from .pacing.tiers import SPEC_RATE, TIERS

TARGET = "target"  # the target flags: `payconform run` and `payconform check` take them
RUN = "run"  # the other options of `payconform run` and of the plugin
FUZZ_SEED = 20240601  # the fuzz phase's default seed: the same run generates the same cases
DEFAULT_WORKERS = "2"
# A pool's run is held by the per-source-IP ceiling, not one key: tests that wait (on the spec's clocks, on the
# window of the one key they send 100 requests with) hold a worker meanwhile, so it needs more workers than
# cores to keep the ceiling busy (`benchmarks/run_cost.py` measures a run's sending time against its floor).
POOL_WORKERS = "4"
# The smoke tier without an operator clock is its real-time waits (a bank return, a chargeback, deliveries),
# each holding a worker: with too few they queue behind each other, with enough they overlap and the run ends
# near its floor; more add nothing (`benchmarks/run_cost.py`). Waiting workers cost no CPU.
REAL_TIME_SMOKE_WORKERS = "6"


@dataclass(frozen=True)
class Option:
    """One option: how both command lines spell, parse and explain it, and what ``payconform run`` does
    with it. Unset on ``payconform``'s command line it is None (False for a switch), so a run forwards only
    what it was given and the pytest run falls back on ``default``."""

    name: str  # the long spelling on payconform's command line, and pytest's besides --payconform-<name>
    help: str
    dest: str  # argparse's name of the value; pytest's is payconform_<dest> (payconform_cred_<dest>)
    metavar: str | None = None
    type: Callable[[str], Any] | None = None
    action: str = "store"  # store, store_true or store_const
    const: Any = None
    choices: tuple[str, ...] | None = None
    default: Any = None  # the pytest option's default
    field: str | None = None  # the target-file field it overrides (the override key is ``dest``)
    env: str | None = None  # the environment variable that sets the same thing
    forward: bool = False  # `payconform run` passes its value to the pytest run under ``name``
    selects: bool = False  # it decides which tests are collected: `payconform run --list` forwards it too
    internal: bool = False  # a developer knob: it works, and the user help leaves it out
    in_cli: bool = True  # an option of `payconform run` (of `check` too in the TARGET group)
    in_pytest: bool = True  # an option of the pytest plugin
    pytest_short: bool = True  # pytest also answers to ``name``, not only to --payconform-<name>
    short: str | None = None  # a one-letter spelling on payconform's command line
    group: str = RUN

    @property
    def help_text(self) -> str:
        """The help both command lines show: ``help``, the environment variable and the target-file field."""
        text = self.help
        if self.env:
            text += f"; environment: {self.env}"
        if self.field:
            text += f"; target file: {self.field}"
        return text

    @property
    def cli_names(self) -> tuple[str, ...]:
        """Its spellings on ``payconform``'s command line."""
        return (self.short, self.name) if self.short else (self.name,)

    @property
    def pytest_names(self) -> tuple[str, ...]:
        """``--payconform-<name>``, which no other plugin takes, then ``name`` when pytest answers to it."""
        bare = self.name.removeprefix("--").removeprefix("payconform-")
        long = f"--payconform-{bare}"
        return (long, self.name) if self.pytest_short and long != self.name else (long,)

    @property
    def pytest_dest(self) -> str:
        """Its value's name in pytest's config (``config.getoption``)."""
        return f"payconform_cred_{self.dest}" if self.dest in CREDENTIAL_NAMES else f"payconform_{self.dest}"


def _credential(name: str) -> Option:
    pool = name == "api_key_pool"
    what = "comma-separated list of equivalent read+write test keys" if pool else name.replace("_", " ")
    return Option(option_name(name), f"credential {name} ({what}); env:NAME reads it from the environment variable "
                                     "NAME", name, metavar="VALUE", field=f"credentials.{name}", group=TARGET)


OPTIONS: tuple[Option, ...] = (
    Option("--target", "target file (YAML or JSON): base_url, org ids, credentials, operator, profile, rate "
                       "limits; see docs/target-file.md", "target", metavar="FILE", forward=True, group=TARGET),
    Option("--base-url", "target base URL including /business/api/v1", "base_url", metavar="URL",
           field="base_url", group=TARGET),
    Option("--org-id", "organization id the api keys belong to", "org_id", metavar="ID", field="org_id",
           group=TARGET),
    Option("--other-org-id", "an organization the api keys cannot access (for FORBIDDEN)", "other_org_id",
           metavar="ID", field="other_org_id", group=TARGET),
    *(_credential(name) for name in CREDENTIAL_NAMES),
    Option("--operator-url", "operator API (http://host:port/_operator)", "operator_url", metavar="URL",
           field="operator.url", group=TARGET),
    Option("--operator-token", "x-operator-token for the operator API; env:NAME reads it from the environment "
                               "variable NAME", "operator_token", metavar="TOKEN", field="operator.token",
           group=TARGET),
    Option("--rate-limit", f"requests per minute per credential the run must stay under (default: the "
                           f"target file's, else the spec's {SPEC_RATE})", "rate_limit", metavar="N", type=int,
           field="rate_limit", group=TARGET),
    Option("--webhook-listen", "address the webhook receiver listens on (default 127.0.0.1:0)", "webhook_listen",
           metavar="HOST:PORT", field="webhooks.listen", group=TARGET),
    Option("--webhook-public-url", "URL the target can reach the webhook receiver at: a tunnel or a host "
                                   "address; see docs/deployment.md, a receiver the target can reach", "webhook_public_url",
           metavar="URL", field="webhooks.public_url", group=TARGET),
    Option("--openapi", "the deployment's OpenAPI document (a file, or a URL on the target's host): the "
                        "operations whose path, method, body or list envelope the spec does not show are read from "
                        "it by operationId, under the target file's own profile; see `payconform profile suggest`",
           "openapi", metavar="FILE|URL", field="openapi", group=TARGET),
    Option("--report-dir", "report directory for results.json and index.html (payconform run adds JUnit XML and "
                           "allure results); default reports/<UTC timestamp>", "report_dir", metavar="DIR",
           forward=True),
    Option("--run-slow", "also run tests that wait in real time", "run_slow", action="store_true", default=False,
           forward=True),
    Option("--strict-profile", "a profile mismatch (the deployment chose otherwise than the profile where the spec "
                               "does not show the choice) fails the run (exit code 1); by default mismatches are "
                               "reported and leave the exit code alone", "strict_profile", action="store_true",
           default=False, forward=True),
    Option("--keep-created", "leave the recipients, draft links and products the run created in the target's "
                             "organization (saves their cleanup requests; by default the run deletes the "
                             "recipients and draft links and archives the products, one request each)",
           "keep_created", action="store_true", default=False, forward=True),
    Option("--select", "comma-separated requirement id globs (IDEM-*), part slugs (authentication) or test name "
                       "globs (test_links_walk); deselects the other conformance tests", "select", metavar="EXPR",
           forward=True, selects=True),
    Option("--tier", "smoke: the tests marked smoke, which touch every part and every catalog row (the "
                     "pull-request gate); full: every test (the default); deep: full with --run-slow and a larger "
                     "fuzz phase. The run's header prints the tier's planned requests", "tier",
           choices=tuple(TIERS), forward=True, selects=True),
    Option("--fuzz-budget", "fuzz phase: generated requests per operation (default: suites/fuzz/fuzz.yaml's, or "
                            "the tier's); raise it for a deeper, longer run", "fuzz_budget", metavar="N", type=int,
           forward=True),
    Option("--no-fuzz", "no fuzz phase (the same as --fuzz-budget 0)", "fuzz_budget", action="store_const",
           const=0),
    Option("--fuzz-max-requests", "fuzz phase: at most N requests in all, split evenly over its operations, "
                                  "whichever worker runs them; an operation that used its share stops (default: "
                                  "what the tier's request budget, or its aimed floor at the keys' rate, leaves "
                                  "after the suites with the keys at hand, printed in the run's header; 0: no "
                                  "cap)", "fuzz_max_requests", metavar="N", type=int, forward=True),
    Option("--fuzz-seed", f"fuzz phase: seed of the generated cases (default {FUZZ_SEED}, printed in the run's "
                          "header and in every fuzz failure); the same seed, budget and target state generate "
                          "the same cases", "fuzz_seed", metavar="N", type=int, default=FUZZ_SEED, forward=True),
    Option("--max-duration", "tests that would start after SECONDS are reported not run and the report is "
                             "written; payconform run exits with its out-of-time code when none of the tests that ran "
                             "failed (pytest alone: the failures code), and also interrupts the tests still running a little later "
                             "(0: no limit; default: with payconform run, twice the least time the target's rate "
                             "limits allow for the tier's request budget with the keys at hand, plus time for "
                             "start-up and the spec's clocks; with pytest alone, no limit)", "max_duration",
           metavar="SECONDS", type=float, forward=True),
    Option("--list", "list the selected requirements and their tests without running anything", "list",
           action="store_true", in_pytest=False),
    Option("--baseline", "CI gate: fail only on a new failure, an expected failure that passes, an unexpected "
                         "skip or a baseline entry that matched nothing (see `payconform baseline update`)",
           "baseline", metavar="FILE", in_pytest=False),
    Option("--warnings-as-errors", "CI gate: a missed approximate-timing requirement fails the run (default: a "
                                   "warning)", "warnings_as_errors", action="store_true", in_pytest=False),
    Option("--workers", f"pytest-xdist workers (default {DEFAULT_WORKERS}, {POOL_WORKERS} with a key pool, in the "
                        f"smoke tier or without an operator, {REAL_TIME_SMOKE_WORKERS} in the smoke tier without "
                        "an operator; 0 runs in one process)", "workers", metavar="N|auto", short="-n",
           in_pytest=False),
    Option("--payconform-embedded", "start the reference server, provision an organization and credentials, run "
                                    "against it", "embedded", action="store_true", default=False, in_cli=False),
    Option("--mutant", "with the embedded reference server: start it with this mutant (a named deviation)",
           "mutant", metavar="NAME", internal=True, pytest_short=False),
    Option("--suites", "suites directory (default: the bundled suites)", "suites", metavar="DIR",
           env="PAYCONFORM_SUITES_DIR", internal=True, in_pytest=False),
)
# The target flags by override key (payconform.target.FLAG_FIELDS), for ``flag_overrides``.
TARGET_FLAGS: dict[str, Option] = {o.dest: o for o in OPTIONS if o.field}


def pytest_args(values: Mapping[str, Any], *, selection_only: bool = False) -> list[str]:
    """The pytest arguments that hand ``payconform run``'s forwarded options on (``values``: by ``dest``,
    None or False for one not given); with ``selection_only``, those that decide which tests are collected."""
    args: list[str] = []
    for opt in OPTIONS:
        if not opt.forward or (selection_only and not opt.selects):
            continue
        value = values.get(opt.dest)
        if value is None or value is False:
            continue
        args += [opt.name] if opt.action == "store_true" else [opt.name, str(value)]
    return args
