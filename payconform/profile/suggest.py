"""``payconform profile suggest``: the override block for the target file's ``profile:``.

It holds what could be determined (the entries the OpenAPI document implies, the values the API showed where
they differ from the profile, and what a run's profile mismatches found out, ``--results``), and names as YAML
comments what could not: what neither the API nor a run showed (the payout scenario selector, the sandbox's
dwell times), what the document lacks, and the routes the target does not serve that nothing named.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
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


class ResultsError(Exception):
    """A run's results.json that cannot be read: the one line that says why."""


def run_mismatches(path: str | Path) -> list[dict[str, Any]]:
    """The ``profile_mismatches`` of a run's results.json (``path`` the file or the report folder holding it)."""
    file = Path(path)
    if file.is_dir():
        file = file / "results.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{file}: cannot read a run's results.json ({exc.__class__.__name__})") from exc
    rows = data.get("profile_mismatches") if isinstance(data, Mapping) else None
    if not isinstance(rows, list):
        raise ResultsError(f"{file}: not a run's results.json (no `profile_mismatches` list)")
    return [row for row in rows if isinstance(row, Mapping)]


def block(target_profile: Mapping[str, Any], mapped: Mapped, report: Report,
          found: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The override block: the document's entries, the target file's own ``profile:`` over them, the overrides
    a run's mismatches named (``found``: they were met with that profile), then the values the check read."""
    return merge([mapped.overrides, target_profile, *(row.get("override") for row in found),
                  *(f.override for f in report.differences if f.override)])


def _within(entry: str, overrides: Mapping[str, Any]) -> bool:
    """Whether ``overrides`` sets ``entry`` (a dotted profile path) or a part of it."""
    node: Any = overrides
    for part in entry.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _value(profile: Mapping[str, Any], dotted: str) -> Any:
    node: Any = profile
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def _flow(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
    return " ".join(text.split()).removesuffix(" ...")


def render(overrides: Mapping[str, Any], mapped: Mapped, report: Report, profile: Mapping[str, Any],
           base_url: str, found: Iterable[Mapping[str, Any]] = ()) -> str:
    """The YAML text: a comment header, the block, then what could not be determined as comments (a run's
    mismatch whose answers did not tell the value among them)."""
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
    untold += report.untold
    untold += [f"operations.{op_id}: not probed within the request budget" for op_id in report.left_out]
    untold += [f"{row.get('entry')}: {row.get('seen')}; the run met it, its answers do not tell the value"
               for row in found if not row.get("override") and not _within(str(row.get("entry")), overrides)]
    untold += [f"{entry}: {what}: not shown by the API; the profile's {_flow(_value(profile, entry))}"
               for entry, what in NOT_SHOWN if _value(profile, entry) is not None and not _within(entry, overrides)]
    if mapped.notes:
        lines.append("# what the OpenAPI document said beside the block (read it where it says the profile is used):")
        lines += [f"#   {line}" for line in mapped.notes]
    if untold:
        lines.append("# not determined (the profile's value is used; set these by hand where the deployment differs):")
        lines += [f"#   {line}" for line in untold]
    return "\n".join(lines) + "\n"
