"""The registry of mutants (deliberate deviations from the spec) and tolerated variants.

A mutant breaks one behaviour the spec requires, so that the project can prove a conformance test fails on
it; `reqs` names the requirement ids it breaks. A variant is behaviour the spec allows or leaves open; the
whole suite must still pass under it. Both are named functions that patch attributes of one Reference
instance (see the patch points in `reference.py`), registered by the decorators below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..reference import Reference

Patch = Callable[["Reference"], None]


@dataclass(frozen=True)
class Mutant:
    name: str
    reqs: tuple[str, ...]
    doc: str
    patch: Patch
    kind: str  # "mutant" | "variant"


MUTANTS: dict[str, Mutant] = {}
VARIANTS: dict[str, Mutant] = {}


class UnknownMutant(ValueError):
    pass


def _register(table: dict[str, Mutant], entry: Mutant) -> None:
    if entry.name in MUTANTS or entry.name in VARIANTS:
        raise ValueError(f"mutant or variant {entry.name!r} is registered twice")
    table[entry.name] = entry


def mutant(name: str, *, reqs: list[str], doc: str) -> Callable[[Patch], Patch]:
    """Register the decorated function as the mutant `name`, which breaks the requirements `reqs`."""
    if not reqs:
        raise ValueError(f"mutant {name!r} must name the requirement(s) it breaks")

    def register(patch: Patch) -> Patch:
        _register(MUTANTS, Mutant(name, tuple(reqs), doc, patch, "mutant"))
        return patch

    return register


def variant(name: str, *, doc: str) -> Callable[[Patch], Patch]:
    """Register the decorated function as the tolerated variant `name`."""
    def register(patch: Patch) -> Patch:
        _register(VARIANTS, Mutant(name, (), doc, patch, "variant"))
        return patch

    return register


def lookup(name: str) -> Mutant:
    """The mutant or variant registered as `name`; UnknownMutant lists the known names otherwise."""
    entry = MUTANTS.get(name) or VARIANTS.get(name)
    if entry is None:
        known = ", ".join(sorted([*MUTANTS, *VARIANTS]))
        raise UnknownMutant(f"unknown mutant or variant {name!r}; known: {known}")
    return entry


def apply(ref: Reference, name: str) -> Mutant:
    """Apply the mutant or variant `name` to this server instance."""
    entry = lookup(name)
    entry.patch(ref)
    return entry
