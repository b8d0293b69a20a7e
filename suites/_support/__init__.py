"""The suites' shared helpers, in the manner of WPT's `resources/`: the one place a factory, a driver or a
check used by more than one test module is defined. Part folders hold tests only.

Modules: `types` (shared types), `profile` (what the profile says of an operation, and what a test may read
of an answer the spec does not show), `answers` (reading JSON answers), `schemas` (answers checked against
the OpenAPI response schemas, made tolerant), `money` and `instants` (formats), `accounts`, `recipients`,
`products`, `balance`, `payouts`, `machines` (the payout lifecycle walk), `approvals`, `batches`, `checkout` (links), `payments` (checkout
payments), `payout_links`, `pricing`, `idempotency`, `signing` (Mode B), `samples` (one request per
documented answer), `lists` (seeders of the list routes), `events` (the catalog and the feed),
`deliveries` (webhook deliveries), `drive` (making each event type happen), `versioning`, `rates` (the rate
limits a test trips, judged by a declared limit), `pool` (a test's many requests over the key pool), `controls`
(the request without a key that shows a 200 was the key's).
"""
