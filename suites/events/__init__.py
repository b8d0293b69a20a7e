"""Spec part: Events."""
