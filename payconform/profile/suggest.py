"""``payconform profile suggest``: the override block for the target file's ``profile:``.

It holds what could be determined (the entries the OpenAPI document implies, the values the API showed where
they differ from the profile), and names as YAML comments what could not: what the API does not show (the
payout scenario selector, the sandbox's dwell times), what the document lacks, and the routes the target does
not serve that nothing named.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from ..results.mismatch import merge
from .findings import Report
from .openapi import Mapped

# Choices the API never shows: (profile entry, what it is). The block names them with the profile's value.
NOT_SHOWN: tuple[tuple[str, str], ...] = (
    ("sandbox.payout_scenarios.select_by", "what selects a sandbox payout's outcome (account_suffix | "
                                           "amount_minor_suffix)"),
    ("sandbox.payout_scenarios.timeline.processing_seconds", "how long a sandbox payout stays `processing`"),
    ("sandbox.payout_scenarios.timeline.settle_seconds", "when every sandbox payout scenario has reached its last "
                                                         "state"),
    ("sandbox.network_refusals.below_minimum.minimum", "the corridor minimum"),
    ("sandbox.network_refusals.over_single_limit.limit", "the single-payout limit"),
    ("sandbox.pricing.quote_lifetime_seconds", "how long a quote can be sent"),
)


def block(target_profile: Mapping[str, Any], mapped: Mapped, report: Report) -> dict[str, Any]:
    """The override block: the document's entries, the target file's own ``profile:`` over them, then the
    values the check read from the target."""
    return merge([mapped.overrides, target_profile, *(f.override for f in report.differences if f.override)])


def _value(profile: Mapping[str, Any], dotted: str) -> Any:
    node: Any = profile
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _flow(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
    return " ".join(text.split()).removesuffix(" ...")


def render(overrides: Mapping[str, Any], mapped: Mapped, report: Report, profile: Mapping[str, Any],
           base_url: str) -> str:
    """The YAML text: a comment header, the block, then what could not be determined as comments."""
    lines = [f"# payconform profile suggest for {base_url}",
             "# the content of the target file's `profile:` (indent it under that key); merged over",
             "# contract/profile.default.yaml, it fits what the target and its OpenAPI document showed"]
    body = yaml.safe_dump(dict(overrides), sort_keys=False, allow_unicode=True, width=120) if overrides else "{}\n"
    lines.append(body.rstrip("\n"))
    untold: list[str] = []
    for f in report.differences:
        if not f.override:
            untold.append(f"{f.entry}: {f.seen}; the target does not tell the value (its OpenAPI document "
                          "would: --openapi)")
    untold += mapped.notes
    untold += report.untold
    untold += [f"operations.{op_id}: not probed within the request budget" for op_id in report.left_out]
    untold += [f"{entry}: {what}: not shown by the API; the profile's {_flow(_value(profile, entry))}"
               for entry, what in NOT_SHOWN if _value(profile, entry) is not None]
    if untold:
        lines.append("# not determined (the profile's value is used; set these by hand where the deployment differs):")
        lines += [f"#   {line}" for line in untold]
    return "\n".join(lines) + "\n"
