"""What would unlock more: skipped requirements grouped by the capability the target did not offer.

A run against a deployment with one key skips what needs more (another credential, an operator action, the
clock, real time). Counting those by capability, with the target-file field or flag that supplies it, tells
the user which addition is worth the most.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .skips import read
from ..target import CREDENTIAL_NAMES, option_name
from .verdicts import SKIP_VERDICTS

OPERATOR = "an operator adapter: `operator:` in the target file (docs/architecture.md, operator adapter)"
SUPPLIES = {
    "operator": OPERATOR,
    "clock": "an operator adapter that moves the organization's clock (`operator:` in the target file)",
    "real_time": "`--run-slow` (waits of a few minutes in real time)",
    "many_requests": "`--run-slow` (the deep tier), or a key pool to spread the requests over "
                     "(`credentials.api_key_pool` in the target file): checks that spend more than a minute of one "
                     "key's requests, and the cases that put a check already run to other routes or inputs",
    "signing_key": "`credentials.signing_key_id` and `credentials.signing_private_key` (Mode B)",
    "second_org": "`other_org_id` in the target file (or `--other-org-id`)",
    "receiver": "`webhooks.public_url` in the target file (or `--webhook-public-url`): an address of this machine "
                "the target can reach (README: a receiver the target can reach)",
    **{name: f"`credentials.{name}` in the target file (or `{option_name(name)}`)" for name in CREDENTIAL_NAMES},
}


def capability(skip_reason: str | None) -> str | None:
    """The capability a skip reason names (``needs operator: cannot X`` -> ``operator``), or None when
    nothing the user can supply unlocks it."""
    need = read(skip_reason)
    found = need.capability if need is not None else None
    return found if found in SUPPLIES else None


def unlock_rows(tests: Iterable[Mapping], requirements: Iterable[Mapping]) -> list[dict]:
    """One row per missing capability: how many skipped requirements (none of whose tests ran) and tests it
    would let run, and what supplies it; the most valuable first."""
    skipped_reqs = {r["id"] for r in requirements if r.get("verdict") in SKIP_VERDICTS}
    reqs: dict[str, set[str]] = {}
    count: dict[str, int] = {}
    for t in tests:
        cap = capability(t.get("skip_reason")) if t.get("outcome") == "skipped" else None
        if cap is None:
            continue
        count[cap] = count.get(cap, 0) + 1
        reqs.setdefault(cap, set()).update(r for r in t.get("requirements") or [] if r in skipped_reqs)
    rows = [{"capability": cap, "requirements": len(reqs[cap]), "tests": count[cap], "supplied_by": SUPPLIES[cap]}
            for cap in count]
    return sorted(rows, key=lambda r: (-r["requirements"], -r["tests"], r["capability"]))
