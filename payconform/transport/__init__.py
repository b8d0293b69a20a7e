"""The one way to the target.

`sender.Transport` sends every request the harness makes (suites, fuzz phase, preflight, webhook tooling):
`guard` refuses what must never go out, `http` gives each request a total deadline, `breaker` notices a
target that stopped answering, and `schemathesis` routes the fuzz phase's cases through the same sender.
"""
