"""Mutants of the Endpoints part, one module per area."""
