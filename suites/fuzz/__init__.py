"""Spec part: Schemathesis fuzzing of the published OpenAPI contract."""
