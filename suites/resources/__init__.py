"""Spec part: Resources and their fields."""
