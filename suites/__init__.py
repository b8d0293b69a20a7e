"""The conformance suites: one package per part of the spec, in the spec's order."""
