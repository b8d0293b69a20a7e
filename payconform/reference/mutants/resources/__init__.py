"""Mutants of the Resources part, one module per area."""
