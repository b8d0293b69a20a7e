"""payconform: contract-conformance test suite for the Payouts, Recipients and Checkout service.

The harness (this package, minus ``payconform.reference``) talks to a target over HTTP only.
"""

__version__ = "0.1.0"
