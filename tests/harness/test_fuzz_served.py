"""The fuzz phase sends each operation whose path the profile chose where the merged profile puts it, and a
route the deployment does not serve there ends its test as a profile mismatch, never a failure."""

from __future__ import annotations

import pytest

from payconform.fuzz.served import PROFILE_PATH, not_served, placed
from payconform.results.mismatch import ProfileMismatch

DOCUMENT = {"openapi": "3.1.0", "paths": {
    "/o/{orgId}/payouts/price": {"parameters": [{"name": "orgId", "in": "path", "required": True}],
                                 "post": {"operationId": "pricePayout"}},
    "/o/{orgId}/links/{linkId}": {"patch": {"operationId": "updateCheckoutLink"}, "get": {"operationId": "getLink"}},
    "/o/{orgId}/payouts": {"post": {"operationId": "createPayout"}},
}}


def test_an_operation_the_profile_places_elsewhere_is_sent_there() -> None:
    ops = {"pricePayout": {"source": "profile", "method": "POST", "path": "/o/{orgId}/payouts/quote"},
           "updateCheckoutLink": {"source": "profile", "method": "POST", "path": "/o/{orgId}/payment-links/{linkId}"},
           "createPayout": {"source": "spec", "method": "POST", "path": "/o/{orgId}/elsewhere"}}
    paths = placed(DOCUMENT, ops)["paths"]
    assert paths["/o/{orgId}/payouts/quote"]["post"]["operationId"] == "pricePayout"
    assert paths["/o/{orgId}/payouts/quote"]["parameters"][0]["name"] == "orgId"  # the path's parameters go along
    assert "/o/{orgId}/payouts/price" not in paths
    assert paths["/o/{orgId}/payment-links/{linkId}"]["post"]["operationId"] == "updateCheckoutLink"
    assert set(paths["/o/{orgId}/links/{linkId}"]) == {"get"}
    assert "/o/{orgId}/elsewhere" not in paths and "post" in paths["/o/{orgId}/payouts"]  # the spec's path stays
    assert paths["/o/{orgId}/payouts/quote"]["post"][PROFILE_PATH] is True  # the suites' status check reads it
    assert PROFILE_PATH not in paths["/o/{orgId}/payouts"]["post"]
    assert PROFILE_PATH not in paths["/o/{orgId}/links/{linkId}"]["get"]
    assert "/o/{orgId}/payouts/price" in DOCUMENT["paths"]  # the contract's own document is left as it is


def test_a_path_with_other_parameters_is_left_where_the_document_has_it() -> None:
    ops = {"pricePayout": {"source": "profile", "method": "POST", "path": "/o/{orgId}/q/{quoteId}"}}
    assert "/o/{orgId}/payouts/price" in placed(DOCUMENT, ops)["paths"]


def test_an_unserved_profile_route_is_a_mismatch_and_an_unserved_spec_route_a_skip() -> None:
    with pytest.raises(ProfileMismatch, match="operations.pricePayout.path"):
        not_served("pricePayout", {"source": "profile"}, "POST /o/{orgId}/payouts/price")
    with pytest.raises(pytest.skip.Exception, match="not implemented by the target") as caught:
        not_served("createPayout", {"source": "spec"}, "POST /o/{orgId}/payouts")
    assert not isinstance(caught.value, ProfileMismatch)
