"""What a run costs and how it stays under the target's limits.

`pacer` spends each rate limit across xdist workers (one SQLite file per run, `files` says where),
`accounting` counts every attempt per test, credential and route, `cost` sets the floor the limits allow
against the wall time, `tiers` gives each tier its budget, and `timeouts` credits a pacing wait to the
test that waited.
"""
