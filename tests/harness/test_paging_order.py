"""payconform.checks.paging order helpers: ties are tolerated only where two items carry the same `createdAt`."""

from __future__ import annotations

from payconform.checks.paging import created_together, in_order

A = {"id": "a", "createdAt": "2026-01-01T00:00:01Z"}
B = {"id": "b", "createdAt": "2026-01-01T00:00:01.000+00:00"}  # the same instant, written otherwise
C = {"id": "c", "createdAt": "2026-01-01T00:00:02Z"}


def test_the_same_instant_is_a_tie_whatever_its_spelling() -> None:
    assert created_together(A, B)
    assert not created_together(A, C)
    assert not created_together({"id": "x"}, {"id": "y"})  # no instant: no tie


def test_in_order_allows_swaps_only_between_tied_items() -> None:
    want = [C, A, B]  # newest first, A before B by creation
    assert in_order([C, A, B], want)
    assert not in_order([C, B, A], want)
    assert in_order([C, B, A], want, created_together)
    assert not in_order([A, C, B], want, created_together)
