"""What a run concludes and how it is shown.

`verdicts` is the one vocabulary and `skips` the structured reasons a test did not run; `records` keeps
each test's transcript and writes results.json; `html` renders the report, `causes` groups failures with
one cause, `unlock` says what a missing capability would add, `repro` writes curl reproductions,
`baseline` gates CI on known outcomes, and `artifacts` scans every file a run writes for secrets.
"""
