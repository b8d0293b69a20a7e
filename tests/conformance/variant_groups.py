"""Which tolerated variants share a whole-suite run.

A whole-suite run costs minutes, so the variants are applied together, several per reference server
(`python -m payconform.reference --mutant a,b,c`), in a few composite runs: a variant only widens what the
spec allows, so a run that passes under several proves each of them. Variants that are alternatives of one
behaviour (two answers to the same second submit) exclude each other and go to different runs.

`PAYCONFORM_VARIANTS` changes the plan: `each` runs every variant alone (to find which one of a failing
group is at fault); a comma-separated list of names runs just those, each alone.
"""

from __future__ import annotations

import os

GROUPS = 2  # composite runs; at least as many as the largest set of mutually exclusive variants
EXCLUSIVE: tuple[frozenset[str], ...] = (
    frozenset({"spent-link-404", "spent-link-unusable"}),  # two answers to the same second submit
    frozenset({"nulls-omitted", "publish-error-null"}),  # null members left out, or written
    frozenset({"nulls-omitted", "balance-after-null"}),
    frozenset({"rate-window-sliding", "rate-window-aligned"}),  # one kind of window or the other
)
ENV = "PAYCONFORM_VARIANTS"


def excluded_by(name: str) -> set[str]:
    return {other for group in EXCLUSIVE if name in group for other in group} - {name}


def composite(names: list[str], groups: int = GROUPS) -> list[list[str]]:
    """Spread `names` over `groups` runs, round robin, each to the first run from its turn on that holds none
    of the variants it excludes. Raises ValueError when one cannot be placed."""
    plan: list[list[str]] = [[] for _ in range(groups)]
    for index, name in enumerate(sorted(names)):
        for shift in range(groups):
            run = plan[(index + shift) % groups]
            if not excluded_by(name) & set(run):
                run.append(name)
                break
        else:
            raise ValueError(f"variant {name!r} excludes a variant in every one of the {groups} runs")
    return [run for run in plan if run]


def plan(names: list[str]) -> dict[str, list[str]]:
    """Run id -> the variants applied together in it, as `PAYCONFORM_VARIANTS` asks (default: composite)."""
    wanted = os.environ.get(ENV, "").strip()
    if wanted == "each":
        return {name: [name] for name in sorted(names)}
    if wanted:
        unknown = set(wanted.split(",")) - set(names)
        if unknown:
            raise ValueError(f"{ENV} names unknown variants: {sorted(unknown)}")
        return {name: [name] for name in wanted.split(",")}
    return {f"variants-{i + 1}": run for i, run in enumerate(composite(names))}
