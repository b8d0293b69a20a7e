"""What a run concludes and how it is shown.

`verdicts` is the one vocabulary, `skips` the structured reasons a test did not run and `mismatch` the
profile mismatch a test can end with (the deployment chose otherwise than the profile); `records` keeps
each test's transcript and writes results.json; `html` renders the report, `causes` groups failures with
one cause, `unlock` says what a missing capability would add, `repro` writes curl reproductions,
`baseline` gates CI on known outcomes, and `artifacts` scans every file a run writes for secrets.
"""
