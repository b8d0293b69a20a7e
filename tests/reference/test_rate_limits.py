"""`--rate-limit` / `--ip-rate-limit` (`RateLimiter.scale`): the per-credential default, the per-route rows in
proportion to it, and the per-address ceiling; the spec's values without them."""

from __future__ import annotations

import subprocess
import sys

from payconform.reference.reference import Reference

from .helpers import Org

PAY = "/payments/organizations/{orgId}"


def _served_before_429(org: Org, path: str, most: int) -> int:
    for sent in range(most):
        if org.call("GET", path).status_code == 429:
            return sent
    return most


def test_the_spec_limits_by_default(ref: Reference) -> None:
    limiter = ref.ratelimit
    assert (limiter.per_key_limit, limiter.per_ip_limit) == (100, 2000)
    assert limiter.per_operation_limits == {"getBalanceHistory": 60, "createPayoutBatch": 30}


def test_scaled_limits_keep_the_routes_in_proportion(ref: Reference, org: Org) -> None:
    ref.ratelimit.scale(10, 50)
    assert ref.ratelimit.per_operation_limits == {"getBalanceHistory": 6, "createPayoutBatch": 3}
    assert ref.ratelimit.per_ip_limit == 50
    assert _served_before_429(org, f"{PAY}/balance/history", 20) == 6
    assert _served_before_429(org, f"{PAY}/balance", 20) == 10 - 7  # the default window holds the 7 reads above


def test_a_limit_below_one_is_refused() -> None:
    result = subprocess.run([sys.executable, "-m", "payconform.reference", "--port", "0", "--operator-token", "t",
                             "--rate-limit", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "a limit is at least 1" in result.stderr
