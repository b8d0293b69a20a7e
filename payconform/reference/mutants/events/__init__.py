"""Mutants of the Events part, one module per area."""
