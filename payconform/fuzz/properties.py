"""Hypothesis settings for property tests whose every example is a request to the target.

Derandomized so a failure reproduces, no deadline (the target's latency is not the property), and no
shrinking: each shrink step is more requests, minutes of them against a target that fails, so the first
failing example is reported as found.
"""

from __future__ import annotations

from typing import Any

import hypothesis

HEALTH_CHECKS = list(hypothesis.HealthCheck)


def request_settings(max_examples: int, **extra: Any) -> hypothesis.settings:
    """Settings for a property over requests: ``max_examples`` requests at most (plus explicit examples)."""
    return hypothesis.settings(
        max_examples=max_examples, derandomize=True, database=None, deadline=None, print_blob=False,
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        suppress_health_check=HEALTH_CHECKS, **extra,
    )
