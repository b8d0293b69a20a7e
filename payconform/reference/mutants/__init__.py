"""Mutants (deliberate deviations from the spec) and tolerated variants of the reference server.

This package is the assembly: the registry lives in `registry.py`, the mutants in one module (or package of
area modules) per spec part, the variants under `variants/`; importing them here registers them. A mutant
breaks the requirements its `reqs` name, and no two modules hold mutants of the same requirement:

    @mutant("idem-replay-executes-twice", reqs=["IDEM-REPLAY"], doc="A replayed key runs the handler again.")
    def idem_replay_executes_twice(ref: Reference) -> None:
        ref.idempotency.lookup = lambda scope, key: None

Select one with `python -m payconform.reference --mutant NAME`; list them with `--list-mutants` /
`--list-variants`.
"""

from importlib import import_module

from .registry import MUTANTS, VARIANTS, Mutant, UnknownMutant, apply, lookup

# The area modules, by spec part; importing one registers its mutants or variants.
AREAS = (
    "authentication.dashboard", "authentication.freshness", "authentication.keys", "authentication.signing",
    "conventions", "endpoints.audit", "endpoints.batches", "endpoints.checkout", "endpoints.history",
    "endpoints.ledger", "endpoints.paging", "endpoints.payment_list", "endpoints.payouts",
    "endpoints.recipient_methods", "endpoints.recipients", "endpoints.requests", "endpoints.webhooks",
    "errors.checkout", "errors.payouts", "errors.requests", "events.deliveries", "events.types", "limits",
    "resources.checkout", "resources.events", "resources.ledger", "resources.payouts", "resources.requests",
    "states.checkout", "states.payouts", "variants.authentication", "variants.conventions",
    "variants.endpoints.checkout", "variants.endpoints.ledger", "variants.endpoints.payouts", "variants.errors",
    "variants.events", "variants.limits", "variants.versioning", "versioning",
)

for _area in AREAS:
    import_module(f"{__name__}.{_area}")

__all__ = ["AREAS", "MUTANTS", "VARIANTS", "Mutant", "UnknownMutant", "apply", "lookup"]
