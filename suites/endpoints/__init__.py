"""Spec part: Endpoints."""
