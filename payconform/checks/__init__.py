"""The spec's rules as checks shared by the suites and the fuzz phase.

`rules` registers the cross-cutting rules (error body, request id, media type, catalog status, money),
`expect` asserts with messages that quote the requirement and give the x-request-id, and `paging` walks a
cursor-paged list and checks the Paging convention.
"""
