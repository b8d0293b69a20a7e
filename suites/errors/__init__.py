"""Spec part: Errors."""
