"""The spec's Conventions that every endpoint shares: cursor paging and idempotency keys."""
