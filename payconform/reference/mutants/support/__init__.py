"""Helpers that the mutants of more than one area share, one module per topic."""
