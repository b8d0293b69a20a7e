"""Spec part: What the service does (conventions: prefix, wire format, request id, money, instants, paging)."""
