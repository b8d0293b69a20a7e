"""Mutants of the States part, one module per area."""
