"""Spec part: States and transitions."""
