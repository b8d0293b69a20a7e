"""Conventions, `{base_url}`: the API lives under the host address plus the fixed prefix `/business/api/v1`."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import pytest

from payconform.suite import Api, Contract, expect, expect_status

PREFIX = "/business/api/v1"


@pytest.mark.req("CONV-PREFIX")
def test_api_answers_only_under_the_fixed_prefix(api: Api, contract: Contract) -> None:
    """A documented route answers under `{base_url}`; the same path beside the prefix is no API route.

    getBalance is spec-shown and needs only the key, so the one difference between the two requests is
    the prefix. Outside it any non-2xx answer is accepted: the spec does not say what is there.
    """
    base = urlsplit(api.base_url)
    base_path = base.path.rstrip("/")
    expect(base_path.endswith(PREFIX), f"the target's base URL {api.base_url} is not a host address plus {PREFIX}")
    expect_status(api.op("getBalance"), 200, "getBalance under {base_url}")
    host_root = urlunsplit((base.scheme, base.netloc, base_path[: -len(PREFIX)], "", ""))
    outside = api.get(host_root + contract.operation("getBalance")["path"])
    expect(not 200 <= outside.status < 300,
           f"GET {contract.operation('getBalance')['path']} without the {PREFIX} prefix answered {outside.status}: "
           "the API is served outside the fixed prefix", outside)
