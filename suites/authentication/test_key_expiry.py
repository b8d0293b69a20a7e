"""Resources > API key, row Expiry ("Default one year, maximum two years"), Authentication > Mode A rule 4
("expired key gives `KEY_EXPIRED`") and the KEY_EXPIRED row (401).

Issuing keys is a dashboard action (the operator); time moves on a fresh organization's own clock.
"""

from __future__ import annotations

import pytest

from payconform.suite import AUTO, Api, OperatorError, expect_error, expect_status

DAY = 86400


def _expect_expired(api: Api, what: str | None = None, credential: str = AUTO) -> None:
    expect_error(api.op("getBalance", credential=credential), 401, "KEY_EXPIRED", what)


@pytest.mark.req("AUTH-KEY-EXPIRED", "ERR-KEY-EXPIRED")
@pytest.mark.needs("expired_key")
def test_expired_key_answers_key_expired(api_as) -> None:
    """The run's expired key: 401 KEY_EXPIRED."""
    _expect_expired(api_as("expired_key"))


@pytest.mark.req("AUTH-KEY-EXPIRED", "ERR-KEY-EXPIRED")
@pytest.mark.needs("operator", "clock")
def test_key_expires_when_its_expiry_passes(fresh_org, clock) -> None:
    """A key issued for two days works, and answers 401 KEY_EXPIRED once the organization's clock is three
    days on."""
    org = fresh_org()
    key = org.issue_key(mode="test", scopes=["read"], expires_in_days=2)
    expect_status(org.api.op("getBalance", credential=key), 200, "a key issued for two days, right away")
    clock.advance(org.org_id, 3 * DAY)
    _expect_expired(org.api, "three days after it was issued for two", key)


@pytest.mark.req("KEY-EXPIRY-DEFAULT", "KEY-EXPIRY-LIMIT")
@pytest.mark.needs("operator", "clock")
def test_default_expiry_is_one_year(fresh_org, clock) -> None:
    """A key issued without an expiry works 364 days later and has expired 367 days later (one year, however
    a year is counted)."""
    org = fresh_org()  # its key is issued with no expiry
    clock.advance(org.org_id, 364 * DAY)
    expect_status(org.api.op("getBalance"), 200, "a key issued without an expiry, 364 days later")
    clock.advance(org.org_id, 3 * DAY)
    _expect_expired(org.api, "a key issued without an expiry, 367 days later")


@pytest.mark.smoke
@pytest.mark.req("KEY-EXPIRY-MAX", "KEY-EXPIRY-LIMIT")
@pytest.mark.needs("operator")
def test_expiry_is_at_most_two_years(fresh_org, request: pytest.FixtureRequest) -> None:
    """A key may be issued for 700 days; one asked for three years is refused, or else capped: it has expired
    two years and two days later."""
    org = fresh_org()
    org.issue_key(mode="test", scopes=["read"], expires_in_days=700)
    try:
        key = org.issue_key(mode="test", scopes=["read"], expires_in_days=3 * 365)
    except OperatorError:
        return  # refused, as the maximum requires
    request.getfixturevalue("clock").advance(org.org_id, (2 * 366 + 2) * DAY)
    _expect_expired(org.api, "a key issued for three years, two years and two days later", key)
