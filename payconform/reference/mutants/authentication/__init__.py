"""Mutants of the Authentication part, one module per area."""
