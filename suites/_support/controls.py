"""Controls: the second request that tells "the target did what the test asked" from "the target answers
everything so": a 200 shows that a key was accepted only if the same request without a key is refused, and a
401 to a bad key shows that it was told apart only if the run's own key is accepted."""

from __future__ import annotations

from typing import Any

from payconform.suite import Api, expect_error, expect_status

# (base URL, organization, hash of the key): keys this worker saw accepted (a control answered 200)
_ACCEPTED: set[tuple[str, str | None, int]] = set()
# (base URL, organization, operation, its parameters): requests this worker saw refused without a key
_REFUSED: set[tuple[str, str | None, str, str]] = set()


def expect_refused_without_key(api: Api, op_id: str, what: str, **params: Any) -> None:
    """The operation without a key answers 401 `UNAUTHORIZED` (Errors: "Key missing"), so the 200 the test
    got with its key says the key was checked. A request once seen refused in this worker is not sent again
    (``_REFUSED``); an answer other than the refusal is never remembered, so it fails every control."""
    seen = (api.base_url, api.org_id, op_id, repr(sorted(params.items())))
    if seen in _REFUSED:
        return
    expect_error(api.op(op_id, credential=None, **params), 401, "UNAUTHORIZED",
                 f"{op_id} without a key (the control: a target that accepts no key says nothing of {what})")
    _REFUSED.add(seen)


def expect_key_accepted(api: Api, what: str) -> None:
    """The run's key reads the balance (200): a refusal of ``what`` means something only from a target that
    accepts the key, not from one that refuses every key. A key once seen accepted in this worker is not asked
    again (``_ACCEPTED``); a refusal is never remembered, so a target refusing the key fails every control."""
    seen = (api.base_url, api.org_id, hash(api.credential))
    if seen in _ACCEPTED:
        return
    expect_status(api.op("getBalance"), 200, f"the run's api key reading the balance (the control for {what})")
    _ACCEPTED.add(seen)
