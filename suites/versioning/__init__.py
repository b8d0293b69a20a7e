"""Spec part: Versioning."""
