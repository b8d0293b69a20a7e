"""The tiny fake suite project (contract + one suite file) that the plugin and CLI tests run, and its CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

REQUIREMENTS = """
parts:
  - {slug: conventions, title: Conventions}
  - {slug: endpoints, title: Endpoints}
  - {slug: authentication, title: Authentication}
requirements:
  - {id: DEMO-PASS, part: endpoints, section: Balance, quote: "GET balance answers the balance.", needs: [api_key], testable: true}
  - {id: DEMO-FAIL, part: endpoints, section: Balance, quote: "Balance is created with 201.", needs: [api_key], testable: true}
  - {id: AUTH-CLOCK, part: authentication, section: Expiry, quote: "Expired key gives KEY_EXPIRED.", needs: [clock], testable: true}
  - {id: AUTH-SLOW, part: authentication, section: Expiry, quote: "Waits in real time.", needs: [real_time], testable: true}
  - {id: AUTH-SIGN, part: authentication, section: Mode B, quote: "Signed mode.", needs: [signing_key_id], testable: true}
  - {id: CONV-UNTESTED, part: conventions, section: Money, quote: "Money is decimal strings.", testable: true}
  - {id: CONV-NOT-SHOWN, part: conventions, section: Paging, quote: "Paging of x: not shown.", testable: false, reason: not shown}
  - {id: CONV-NOT-TESTABLE, part: conventions, section: Keys, quote: "Keys must be used from servers only.", testable: false, reason: "cannot be observed"}
"""

ERRORS = """
errors:
  - {type: UNAUTHORIZED, statuses: [401]}
  - {type: FORBIDDEN, statuses: [403]}
  - {type: ROUTE_NOT_FOUND, statuses: [404]}
"""

PROFILE = """
operations:
  getBalance: {method: GET, path: "/payments/organizations/{orgId}/balance", idempotency: none, source: spec}
  fundSandbox: {method: POST, path: "/payments/organizations/{orgId}/sandbox/funding", idempotency: required, money_write: true, source: profile}
"""

SUITE = '''
import pytest
from payconform.checks.expect import expect_status, expect_error

@pytest.mark.req("DEMO-PASS")
def test_balance(api, target, contract):
    ex = api.op("getBalance")
    expect_status(ex, 200)
    assert contract.requirements["DEMO-PASS"]["section"] == "Balance"

@pytest.mark.req("DEMO-FAIL")
def test_balance_created(api):
    expect_status(api.get("/payments/organizations/{orgId}/balance"), 201)

@pytest.mark.req("DEMO-PASS")
def test_other_org_forbidden(api, own_org, target):
    expect_error(api.get(f"/payments/organizations/{api.other_org_id}/balance"), 403, "FORBIDDEN")
    org = own_org()  # the target's own organization, no operator needed
    assert org.org_id == target.org_id and org.key in target.pool
    expect_error(org.api.get(f"/payments/organizations/{api.other_org_id}/balance"), 403, "FORBIDDEN")

@pytest.mark.req("DEMO-PASS")
def test_read_only_and_anon(api_as, anon, unique):
    assert api_as("read_only_key").get("/payments/organizations/{orgId}/balance").status == 200
    expect_error(anon.get("/payments/organizations/{orgId}/balance"), 401, "UNAUTHORIZED")
    a, b = unique("prod"), unique("prod")
    assert a != b and a.startswith("prod-")

@pytest.mark.req("AUTH-CLOCK")
@pytest.mark.needs("clock")
def test_clock(clock, target):
    clock.advance(target.org_id, 60)
    clock.advance(30)

@pytest.mark.req("AUTH-CLOCK")
@pytest.mark.needs("operator")
def test_fresh_org(fresh_org, target):
    org = fresh_org(features=["developer"])
    assert org.org_id != target.org_id
    assert org.api.get("/payments/organizations/{orgId}/balance").status == 200
    assert org.issue_key(scopes=["read"]).startswith("svc_test_")

@pytest.mark.req("AUTH-SLOW")
@pytest.mark.needs("real_time")
def test_slow():
    pass

@pytest.mark.req("AUTH-SIGN")
@pytest.mark.needs("signing_key_id")
def test_signed():
    pass

@pytest.mark.req("AUTH-SIGN")
def test_signed_factory(api_as):
    api_as("signing_key_id")

@pytest.mark.req("CONV-NOT-SHOWN")
@pytest.mark.skip(reason="static skip")
def test_static_skip():
    pass
'''


def write_project(root: Path) -> Path:
    """Write the fake contract and suite under ``root``."""
    (root / "contract" / "catalog").mkdir(parents=True)
    (root / "contract" / "requirements.yaml").write_text(REQUIREMENTS)
    (root / "contract" / "profile.default.yaml").write_text(PROFILE)
    (root / "contract" / "catalog" / "errors.yaml").write_text(ERRORS)
    (root / "suites" / "endpoints").mkdir(parents=True)
    (root / "suites" / "endpoints" / "test_demo.py").write_text(textwrap.dedent(SUITE))
    return root


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A fake suite project for the CLI."""
    return write_project(tmp_path)


def cli_env(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PAYCONFORM_CONTRACT_DIR"] = str(workdir / "contract")
    env["PAYCONFORM_SUITES_DIR"] = str(workdir / "suites")
    env["PAYCONFORM_REFERENCE_MODULE"] = "fake_reference"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def cli(workdir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m payconform.cli ARGS`` in the fake project, against the fake reference when embedded."""
    return subprocess.run([sys.executable, "-m", "payconform.cli", *args], cwd=workdir, env=cli_env(workdir),
                          capture_output=True, text=True, timeout=timeout)
