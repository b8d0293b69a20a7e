"""``payconform profile check``: the merged profile against what the target shows, in about 20 requests.

It reads what the API exposes (the policy's approval threshold, the corridors, the checkout scenario table,
the payment reasons), probes each profile route (``probe``) and compares: one finding per entry. It sends
only reads and requests that cannot succeed, with the target's ``api_key``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ..client import Api, Exchange
from ..context import RunContext
from ..target import Target
from .findings import DIFFERS, MATCHES, UNKNOWN, Finding, Report, body_of, error_type, shown
from .probe import MAX_REQUESTS, Budget, Prober, Unusable, needed, plan

PROBE_TIMEOUT = 5.0  # seconds a probe may take: a target that does not answer is told apart in seconds
POLICY, CORRIDORS, SCENARIOS, REASONS = "getPolicy", "listCorridors", "getSandboxScenarios", "listPaymentReasons"


def check(target: Target, profile: Mapping[str, Any], *, run: RunContext | None = None, spent: int = 0,
          http: Any = None) -> Report:
    """Compare ``profile`` (the merged profile) with ``target``; ``spent`` requests already went to it (the
    document's fetch), so the whole stays within ``MAX_REQUESTS``. ``http``: an httpx transport (tests)."""
    report = Report(requests=spent)
    if not target.api_key:
        report.fatal = "no credential: the target file (or --api-key) names no api_key"
        return report
    api = Api(target, target.api_key, run=run, timeout=min(PROBE_TIMEOUT, float(target.request_timeout)),
              transport=http)
    budget = Budget(MAX_REQUESTS - spent)
    prober = Prober(api, profile, budget)
    try:
        _policy(prober, report)
        if report.fatal is None:
            _corridors(prober, report)
            _scenarios(prober, report)
            _reasons(prober, report)
            wanted = needed()
            for op_id in plan(profile, wanted):
                if op_id == CORRIDORS:
                    continue
                ex = prober.send(op_id)
                if ex is not None:
                    report.findings.append(prober.route(op_id, ex))
                    found = prober.envelope(op_id, ex)
                    if found is not None:
                        report.findings.append(found)
    except Unusable as exc:
        report.fatal = str(exc)
    finally:
        api.close()
    report.left_out = budget.left_out
    report.requests = MAX_REQUESTS - budget.left
    return report


def _value_at(body: Any, dotted: str) -> Any:
    node = body
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _leaves(body: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted path, value) of every scalar of a JSON object."""
    if not isinstance(body, Mapping):
        return [(prefix, body)] if prefix else []
    out: list[tuple[str, Any]] = []
    for key, value in body.items():
        out += _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    return out


def _decimal(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value)) if value is not None and not isinstance(value, bool) else None
    except InvalidOperation:
        return None


def _policy(prober: Prober, report: Report) -> None:
    """The approval threshold the policy shows at ``sandbox.approval.policy_field``."""
    ex = prober.send(POLICY)
    assert ex is not None  # the first request: the budget cannot be spent yet
    kind = error_type(ex)
    if ex.status in (401, 403) or kind == "ROUTE_NOT_FOUND" or body_of(ex) is None:
        report.fatal = (f"reading the organization's policy answered {shown(ex)} (x-request-id {ex.request_id}): "
                        "is base_url right, and api_key a key of org_id? (`payconform check` tells)")
        return
    approval = (prober.profile.get("sandbox") or {}).get("approval") or {}
    field, expected = str(approval.get("policy_field") or "approvals.threshold"), approval.get("threshold")
    entry = "sandbox.approval.threshold"
    seen = _value_at(body_of(ex), field)
    if _decimal(seen) is None:
        found = [(path, value) for path, value in _leaves(body_of(ex))
                 if "threshold" in path.rsplit(".", 1)[-1].lower() and _decimal(value) is not None]
        if len(found) == 1:
            path, value = found[0]
            report.findings.append(Finding(
                "sandbox.approval.policy_field", DIFFERS, f"the policy shows a threshold of {value} at `{path}`",
                expected=f"`{field}`", request_id=ex.request_id,
                override={"sandbox": {"approval": {"policy_field": path, "threshold": str(value)}}}))
        else:
            report.untold.append(f"{entry}: the policy shows no threshold at `{field}` (tests use the profile's "
                                 f"{expected})")
        return
    if _decimal(seen) == _decimal(expected):
        report.findings.append(Finding(entry, MATCHES, f"the policy shows {seen} at `{field}`"))
    else:
        report.findings.append(Finding(entry, DIFFERS, f"the policy shows {seen} at `{field}`", expected=str(expected),
                                       override={"sandbox": {"approval": {"threshold": str(seen)}}},
                                       request_id=ex.request_id))


def _items(prober: Prober, report: Report, op_id: str, ex: Exchange) -> list[Any] | None:
    """The items of a list answer (the route and envelope findings added), or None."""
    report.findings.append(prober.route(op_id, ex))
    found = prober.envelope(op_id, ex)
    if found is None:
        return None
    report.findings.append(found)
    key = ((prober.profile["operations"][op_id].get("page") or {}).get("items"))
    body = body_of(ex)
    if found.status == MATCHES:
        return body if key is None else body[key]
    if found.override:
        new_key = found.override["operations"][op_id]["page"]["items"]
        return body if new_key is None else body[new_key]
    return None


def _corridors(prober: Prober, report: Report) -> None:
    """The corridor rows by ``sandbox.pricing.corridor_key``, against the profile's corridors."""
    ex = prober.send(CORRIDORS)
    rows = _items(prober, report, CORRIDORS, ex) if ex is not None else None
    if rows is None:
        return
    rows = [r for r in rows if isinstance(r, Mapping)]
    pricing = (prober.profile.get("sandbox") or {}).get("pricing") or {}
    key, caps = str(pricing.get("corridor_key") or "currency"), str(pricing.get("capabilities") or "capabilities")
    wanted = {str(c.get("currency")) for c in (prober.profile.get("corridors") or {}).values()
              if isinstance(c, Mapping)}
    if rows and not any(key in r for r in rows):
        scores = {f: len(wanted & {str(r.get(f)) for r in rows}) for f in {f for r in rows for f in r}}
        best = max(scores.values(), default=0)
        fields = [f for f, s in scores.items() if s == best and best]
        report.findings.append(Finding(
            "sandbox.pricing.corridor_key", DIFFERS, f"the corridor rows have no `{key}` field"
            + (f"; `{fields[0]}` names their currencies" if len(fields) == 1 else ""), expected=f"`{key}`",
            override={"sandbox": {"pricing": {"corridor_key": fields[0]}}} if len(fields) == 1 else None,
            request_id=ex.request_id))
        if len(fields) != 1:
            return
        key = fields[0]
    listed = {str(r.get(key)) for r in rows}
    missing = sorted(wanted - listed)
    report.findings.append(Finding(
        "corridors", DIFFERS if missing else MATCHES,
        f"the target lists no corridor {', '.join(missing)} (it lists {', '.join(sorted(listed))})" if missing
        else f"the target lists every profile corridor by `{key}` ({', '.join(sorted(wanted))})",
        expected=", ".join(sorted(wanted)), request_id=ex.request_id if missing else None))
    if rows and not any(isinstance(r.get(caps), Mapping) for r in rows):
        holders = sorted({f for r in rows for f, v in r.items() if isinstance(v, Mapping) and "exactOutput" in v})
        report.findings.append(Finding(
            "sandbox.pricing.capabilities", DIFFERS, f"the corridor rows have no `{caps}` object"
            + (f"; `{holders[0]}` holds exactOutput" if len(holders) == 1 else ""), expected=f"`{caps}`",
            override={"sandbox": {"pricing": {"capabilities": holders[0]}}} if len(holders) == 1 else None,
            request_id=ex.request_id))


def _scenarios(prober: Prober, report: Report) -> None:
    """The checkout scenario table against ``sandbox.checkout_payment.outcomes``."""
    ex = prober.send(SCENARIOS)
    if ex is None:
        return
    entry = "sandbox.checkout_payment.outcomes"
    body = body_of(ex)
    rows = body.get("data") if isinstance(body, dict) else body
    if ex.status != 200 or not isinstance(rows, list):
        report.findings.append(Finding(entry, UNKNOWN, f"the scenario table answered {shown(ex)} without rows",
                                       request_id=ex.request_id))
        return
    listed = {str(r.get("suffix")) for r in rows if isinstance(r, Mapping)}
    table = ((prober.profile.get("sandbox") or {}).get("checkout_payment") or {}).get("outcomes") or {}
    expected = {str(k) for k in table}
    if expected <= listed:
        report.findings.append(Finding(entry, MATCHES, f"the scenario table lists {', '.join(sorted(listed))}"))
    else:
        report.findings.append(Finding(entry, DIFFERS, f"the scenario table lists {', '.join(sorted(listed))}",
                                       expected=", ".join(sorted(expected)), request_id=ex.request_id))


def _reasons(prober: Prober, report: Report) -> None:
    """The payment reasons against the ``paymentReason`` the profile's bodies send."""
    ex = prober.send(REASONS)
    reasons = _items(prober, report, REASONS, ex) if ex is not None else None
    if reasons is None:
        return
    known = {r if isinstance(r, str) else (r.get("code") or r.get("id")) for r in reasons if r}
    for op_id, op in (prober.profile.get("operations") or {}).items():
        sent = (op.get("body") or {}).get("paymentReason") if isinstance(op, Mapping) else None
        if not isinstance(sent, str):
            continue
        entry = f"operations.{op_id}.body.paymentReason"
        if sent in known:
            report.findings.append(Finding(entry, MATCHES, f"{sent} is one of the target's payment reasons"))
        else:
            first = sorted(str(k) for k in known if k)[:1]
            report.findings.append(Finding(
                entry, DIFFERS, f"{sent} is not one of the target's {len(known)} payment reasons", expected=sent,
                override={"operations": {op_id: {"body": {"paymentReason": first[0]}}}} if first else None,
                request_id=ex.request_id))
