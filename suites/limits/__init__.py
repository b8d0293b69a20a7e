"""Spec part: Limits."""
