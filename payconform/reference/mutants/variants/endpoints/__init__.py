"""Tolerated variants of the Endpoints part, one module per area."""
