"""Spec part: Authentication."""
