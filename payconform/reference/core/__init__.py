"""The platform every part stands on: storage, clock, ids, errors, money, the request and its operation, organizations, injected faults and the audit log."""
