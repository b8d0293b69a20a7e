"""Can the target reach the suite's webhook receiver?

The receiver listens on the target file's ``webhooks.listen`` and advertises ``webhooks.public_url`` (or its
own address). A deployment on another host cannot post to a loopback address, and a webhook test that waits
for a delivery which could never arrive would fail for a reason that is the run's, not the target's. So a
remote target without a public URL skips the webhook tests with one reason, said once in the header; with a
public URL the suite probes once per worker (``suites/_support/reach.py``) and skips the same way when no
delivery arrives. A target on this machine reaches a loopback receiver: its missing deliveries are failures.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from .results.skips import Kind, Needs
from .target import Target
from .webhooks import receiver_settings

HOW = ("set webhooks.public_url (or --webhook-public-url) to an address of this machine the target can reach, "
       "e.g. a reverse SSH tunnel (README: a receiver the target can reach)")


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback or the wildcard address."""
    name = (host or "").strip("[]").lower()
    if name in ("localhost", ""):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return name.endswith(".localhost")
    return address.is_loopback or address.is_unspecified


def static_cause(target: Target) -> str | None:
    """Why the receiver cannot be reached, known without asking the target: a target on another host and no
    public URL. None when a delivery could arrive (or the probe must tell)."""
    listen, public_url = receiver_settings(target.webhooks)
    if public_url or is_loopback(urlsplit(target.base_url).hostname):
        return None
    return (f"the target at {urlsplit(target.base_url).hostname} cannot reach the receiver listening on {listen} "
            f"(a local address): {HOW}")


def static_reason(target: Target) -> str | None:
    """The skip reason of ``static_cause``, or None."""
    cause = static_cause(target)
    return Needs(Kind.RECEIVER, cause).reason if cause else None


def needs_probe(target: Target) -> bool:
    """A public URL is the user's claim that the target reaches the receiver: a delivery confirms it."""
    return receiver_settings(target.webhooks)[1] is not None


def probe_reason(url: str, waited: float) -> str:
    """The skip reason when the probe's delivery did not arrive."""
    return Needs(Kind.RECEIVER, f"the target cannot reach the receiver at {url}: no delivery arrived within "
                                f"{waited:g} s of a payout made for the check; {HOW}").reason
