"""Resources > Audit event row and Endpoints > Balance and ledger, GET /audit-events.

"One row per audited mutation (payouts created or canceled, batches, approvals decided, recipients changed,
keys and webhook endpoints managed), recorded whether it succeeded or was refused." Rows are found by the
fields the spec names (`requestId`, `resourceId`, `apiKeyPrefix`, `actorUserId`). The creation-time field is
not named, so `createdAfter`/`createdBefore` are checked with bounds between three rows of the test's own made
at times the test knows: a fresh organization's clock, moved between the rows, or (without an operator) the
rows' `createdAt` where they show one. Order, paging and a foreign cursor are checked in
suites/conventions/test_paging.py, the read-only key in suites/authentication/test_read_only.py.
"""

from __future__ import annotations

import secrets
import time
from datetime import timedelta
from typing import Any

import pytest

from payconform.suite import Api, Contract, Exchange, Kind, Needs, Pager, expect, expect_error

from .._support.answers import names_field
from .._support.instants import is_instant, parse_instant, write_instant
from .._support.lists import shown_step
from .._support.realtime import REAL_TIME, Timed
from .._support.recipients import create_recipient, refused_recipient_update


def _rows(api: Api, contract: Contract, **params: str) -> list[dict[str, Any]]:
    return Pager(api, contract, "listAuditEvents", params=params).page(limit=100, what=f"audit events {params}").items


def _set(row: dict[str, Any], name: str) -> bool:
    return row.get(name) not in (None, "")


def _rows_of_request(api: Api, contract: Contract, ex: Exchange, resource_id: str) -> list[dict[str, Any]]:
    expect(ex.request_id is not None, "the mutation's answer has no x-request-id", ex)
    return [r for r in _rows(api, contract, resourceId=resource_id) if r.get("requestId") == ex.request_id]


@pytest.mark.req("AUDIT-ROW-PER-MUTATION", "AUDIT-FIELDS")
def test_a_mutation_writes_one_row(api: Api, contract: Contract, unique) -> None:
    """A recipient created through the API: exactly one row naming it, with `id`, `action`, `resourceId`, the
    `requestId` of the call, and exactly one of `apiKeyPrefix` and `actorUserId` naming who made it."""
    recipient = create_recipient(api, contract, unique)
    rows = _rows(api, contract, resourceId=recipient["id"])
    expect(len(rows) == 1, f"creating recipient {recipient['id']} left {len(rows)} audit rows naming it")
    row = rows[0]
    for name in ("id", "action", "resourceId", "requestId"):
        expect(_set(row, name), f"the audit row has no `{name}`: {row!r}")
    expect(row["resourceId"] == recipient["id"], f"`resourceId` is {row['resourceId']!r}")
    expect(_set(row, "apiKeyPrefix") != _set(row, "actorUserId"),
           f"the audit row sets apiKeyPrefix={row.get('apiKeyPrefix')!r} and actorUserId={row.get('actorUserId')!r}; "
           "\"`apiKeyPrefix` and `actorUserId` (exactly one of the two is set)\"")


@pytest.mark.req("AUDIT-REFUSED-RECORDED")
def test_a_refused_mutation_writes_a_row(api: Api, contract: Contract, unique) -> None:
    """A recipient change refused with 404: its row is there all the same, with the call's `requestId`."""
    missing = unique("rcp-missing")
    ex = api.op("updateBeneficiary", recipientId=missing, json={"name": unique("name")})
    expect(ex.status == 404, f"changing recipient {missing!r} that does not exist answered {ex.status}", ex)
    expect(len(_rows_of_request(api, contract, ex, missing)) == 1,
           "the refused recipient change has no audit row with its requestId", ex)


@pytest.mark.req("AUDIT-ACTOR-EXACTLY-ONE")
def test_exactly_one_actor(own_org, contract: Contract, unique) -> None:
    """Every row of the newest page names exactly one of `apiKeyPrefix` and `actorUserId` (the test's own
    API-key row among whatever else the organization recorded, dashboard rows included)."""
    api = own_org().api
    ex = refused_recipient_update(api, unique)
    rows = _rows(api, contract)
    expect(any(_set(r, "apiKeyPrefix") for r in rows if r.get("requestId") == ex.request_id),
           "no audit row names the API key that made a change", ex)
    for row in rows:
        expect(_set(row, "apiKeyPrefix") != _set(row, "actorUserId"),
               f"row {row.get('id')!r} sets apiKeyPrefix={row.get('apiKeyPrefix')!r} and "
               f"actorUserId={row.get('actorUserId')!r}: exactly one must be set")


@pytest.mark.req("AUDIT-APIKEY-FILTER")
def test_api_key_filter(own_org, contract: Contract, unique) -> None:
    """`apiKey` takes the key's prefix (as rows show it): only that key's rows; an unknown prefix: an empty page."""
    handle = own_org()
    ex = refused_recipient_update(handle.api, unique)
    mine = [r for r in _rows(handle.api, contract) if r.get("requestId") == ex.request_id]
    expect(len(mine) == 1 and _set(mine[0], "apiKeyPrefix"), f"no row with `apiKeyPrefix` for the change: {mine}", ex)
    prefix = mine[0]["apiKeyPrefix"]
    expect(str(handle.key).startswith(prefix), "`apiKeyPrefix` is not a prefix of the key that made the change", ex)
    rows = _rows(handle.api, contract, apiKey=prefix)
    expect(any(r.get("requestId") == ex.request_id for r in rows), "filtering on the key's prefix hides its row")
    expect(all(r.get("apiKeyPrefix") == prefix for r in rows), "filtering on a key's prefix lists other actors' rows")
    unknown = _rows(handle.api, contract, apiKey="svc_test_" + secrets.token_hex(16))
    expect(unknown == [], f"an unknown key prefix lists {len(unknown)} rows; it gives an empty page")


# rows with `actorUserId` are the dashboard's: only a fresh organization (its key issued there) surely holds one
FILTERS = ["action", "resourceId", pytest.param("actorUserId", marks=pytest.mark.needs("operator"))]


@pytest.mark.req("AUDIT-FILTERS")
@pytest.mark.parametrize("name", FILTERS)
def test_filter(request: pytest.FixtureRequest, contract: Contract, unique, name: str) -> None:
    """Each filter keeps the rows it names and drops the others (the instants: `test_created_range`). The value
    filtered on is the test's own row's where it sets the field (another row's of the newest page otherwise),
    so the answer must list that row and nothing that carries another value. A row of another value (a
    recipient created) is made only where the newest page holds none."""
    api = request.getfixturevalue("fresh_org" if name == "actorUserId" else "own_org")().api
    ex = refused_recipient_update(api, unique)
    everything = _rows(api, contract)
    mine = [r for r in everything if r.get("requestId") == ex.request_id]
    expect(len(mine) == 1, f"the refused recipient change has {len(mine)} rows on the newest page", ex)
    if len({str(r.get(name)) for r in everything}) < 2:
        create_recipient(api, contract, unique)
        everything = _rows(api, contract)
    want = [r for r in mine + everything if _set(r, name)]
    if not want:
        pytest.skip(f"no audit row of the newest page sets `{name}`")
    value = want[0][name]
    rows = _rows(api, contract, **{name: value})
    strays = [r.get(name) for r in rows if r.get(name) != value]
    expect(not strays, f"{name}={value!r} lists {len(strays)} rows carrying other values, e.g. {strays[:3]}")
    expect(want[0].get("id") in {r.get("id") for r in rows}, f"{name}={value!r} hides row {want[0].get('id')!r}")
    expect(any(r.get(name) != value for r in everything),
           f"every row carries {name}={value!r}: the filter cannot be seen to work")


GAP = 0.25  # seconds between the rows in real time: more than two steps of a time shown to 100 ms
COARSEST = timedelta(milliseconds=100)


def _between(timed: Timed, contract: Contract, unique) -> tuple[dict[str, Exchange], str, str, str]:
    """Three audited changes A, B and C, an instant T1 between A and B and one T2 between B and C (strictly:
    the spec does not say whether a bound is inclusive), and where the instants come from. On a fresh
    organization's clock the rows are a minute apart and the bounds are the clock's own times. In real time
    the rows are `GAP` apart and a bound is one shown step past the earlier row's `createdAt` (a shown time
    stands less than a step from the stored one) and no later than a step before the later row's."""
    api, clock = timed.api, timed.clock
    made: dict[str, Exchange] = {}
    if clock is not REAL_TIME:
        bounds = []
        for name in ("A", "B"):
            made[name] = refused_recipient_update(api, unique)
            bounds.append(clock.advance(timed.org_id, 60))
            clock.advance(timed.org_id, 60)
        made["C"] = refused_recipient_update(api, unique)
        if not all(is_instant(t) for t in bounds):
            Needs(Kind.CLOCK, "the operator's clock does not say what time it is").skip()
        return made, bounds[0], bounds[1], "the organization's clock, moved a minute after A and after B"
    for name in ("A", "B", "C"):
        made[name] = refused_recipient_update(api, unique)
        if name != "C":
            time.sleep(GAP)
    newest = _rows(api, contract)
    shown = {name: next((r.get("createdAt") for r in newest if r.get("requestId") == ex.request_id), None)
             for name, ex in made.items()}
    if not all(is_instant(t) for t in shown.values()):
        Needs(Kind.OPERATOR, "audit rows show no `createdAt` (the creation time's field is not named) and no "
              "operator clock gives the rows' times").skip()
    step = shown_step([parse_instant(t) for r in newest if is_instant(t := r.get("createdAt"))])
    at = {name: parse_instant(t) for name, t in shown.items()}
    if step > COARSEST or at["B"] - at["A"] < 2 * step or at["C"] - at["B"] < 2 * step:
        Needs(Kind.OPERATOR, f"audit rows made {GAP:g} s apart show times {shown} (to {step.total_seconds():g} s): "
              "too close to put a bound between them without an operator clock").skip()
    return (made, write_instant(at["A"] + step), write_instant(at["B"] + step),
            f"the rows' `createdAt` {shown}, shown to {step.total_seconds():g} s")


@pytest.mark.req("AUDIT-FILTERS")
def test_created_range(timed: Timed, contract: Contract, unique) -> None:
    """`createdAfter` and `createdBefore`, each alone and both together, with bounds between the test's own rows
    A, B and C (T1 between A and B, T2 between B and C): `createdAfter=T1` lists B and C, not A;
    `createdBefore=T2` lists A and B, not C; both list B alone. Rows are found by the `requestId` of their
    change; other rows of the organization are not judged (their time field is not named)."""
    made, t1, t2, source = _between(timed, contract, unique)
    cases = (({"createdAfter": t1}, {"B", "C"}), ({"createdBefore": t2}, {"A", "B"}),
             ({"createdAfter": t1, "createdBefore": t2}, {"B"}))
    for params, want in cases:
        listed = {r.get("requestId") for r in _rows(timed.api, contract, **params)}
        got = {name for name, ex in made.items() if ex.request_id in listed}
        expect(got == want, f"{params} lists the test's rows {sorted(got) or 'none'} of A, B, C; the bounds lie "
               f"between them (from {source}), so it must list {sorted(want)}")


@pytest.mark.breadth
@pytest.mark.req("AUDIT-INVALID-QUERY")
@pytest.mark.parametrize("instant", ["2026-01-01T00:00:00", "yesterday"])
@pytest.mark.parametrize("name", ["createdAfter", "createdBefore"])
def test_malformed_instant_is_refused(api: Api, name: str, instant: str) -> None:
    """An instant without a timezone, or not an instant: 400 ("filters require a timezone"); a
    VALIDATION_ERROR names the parameter in `errors`."""
    ex = api.op("listAuditEvents", params={name: instant})
    body = expect_error(ex, 400, {"VALIDATION_ERROR", "BAD_REQUEST"}, f"{name}={instant!r}")
    if body.get("type") == "VALIDATION_ERROR":
        expect(names_field(body.get("errors"), name), f"`errors` does not name `{name}`: {body.get('errors')!r}", ex)


@pytest.mark.smoke
@pytest.mark.req("AUDIT-RETENTION", "AUDIT-RETENTION-LIMIT")
@pytest.mark.needs("operator", "clock")
def test_rows_are_retained_five_years(fresh_org, clock, contract: Contract, unique) -> None:
    """A row is still listed just short of five years after its mutation (the organization's clock moved on;
    read with a key issued then, since the first has expired by then)."""
    days = contract.limits["audit_retention"]["years"] * 365 - 1
    handle = fresh_org()
    ex = refused_recipient_update(handle.api, unique)
    clock.advance(handle.org_id, days * 86400)
    later = handle.api.with_credential(handle.issue_key())
    rows = [r for r in _rows(later, contract) if r.get("requestId") == ex.request_id]
    expect(len(rows) == 1, f"{days} days after a refused recipient change its audit row is gone: audit rows are "
           "retained five years", ex)
