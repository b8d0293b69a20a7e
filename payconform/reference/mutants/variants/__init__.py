"""Tolerated variants, one module per spec part (the Endpoints part's in a package of its own)."""
