"""The spec's Events: the event store, webhook endpoints, the dispatcher that delivers, and the due changes it announces."""
