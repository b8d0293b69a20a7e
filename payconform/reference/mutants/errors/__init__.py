"""Mutants of the Errors part, one module per area."""
