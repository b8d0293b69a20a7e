"""The spec's Limits: the per-key, per-IP and per-operation rate limits."""
