"""Every mutant and variant applies; the foundation mutants really change the behaviour they name."""

from __future__ import annotations

import ast
import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from payconform.reference import mutants
from payconform.reference.app import build_app
from payconform.reference.reference import Config, Reference

from .helpers import API, PRODUCT, new_org, operator

PRODUCTS = "/checkout/organizations/{orgId}/products"
LIST = "/recipients/{orgId}"


def _revoked_key_differs(org) -> bool:
    key = operator(org.client, "POST", f"/orgs/{org.id}/keys", {"mode": "test"}).json()
    operator(org.client, "POST", f"/orgs/{org.id}/keys/{key['id']}/revoke")
    return org.call("GET", LIST, key=key["key"]).json()["type"] != "UNAUTHORIZED"


def _after_rate_limit(org):
    return [org.call("GET", LIST) for _ in range(101)][-1]


def _replay_runs_again(org) -> bool:
    org.call("POST", PRODUCTS, json=PRODUCT, idem="k")
    return org.call("POST", PRODUCTS, json=PRODUCT, idem="k").status_code == 409  # the re-run hits the name clash


def _conflict_missed(org) -> bool:
    org.call("POST", PRODUCTS, json=PRODUCT, idem="k")
    return org.call("POST", PRODUCTS, json={**PRODUCT, "name": "B"}, idem="k").status_code == 201


def _4xx_kept_key(org) -> bool:
    org.call("POST", PRODUCTS, json={**PRODUCT, "unitAmount": "0"}, idem="k")
    return org.call("POST", PRODUCTS, json=PRODUCT, idem="k").status_code != 201


def _body_request_id_differs(org) -> bool:
    r = org.call("GET", LIST, key=None)
    return r.json()["requestId"] != r.headers["x-request-id"]


def _wrong_secret_detail_differs(org) -> bool:
    wrong = org.key[:-1] + ("A" if org.key[-1] != "A" else "B")
    return org.call("GET", LIST, key=wrong).json()["detail"] != org.call("GET", LIST, key="junk").json()["detail"]


DEVIATES = {
    "idem-replay-executes-twice": _replay_runs_again,
    "idem-conflict-undetected": _conflict_missed,
    "idem-4xx-keeps-key": _4xx_kept_key,
    "idem-key-256-accepted": lambda org: org.call("POST", PRODUCTS, json=PRODUCT, idem="k" * 256).status_code == 201,
    "request-id-body-differs": _body_request_id_differs,
    "request-id-header-missing": lambda org: "x-request-id" not in org.call("GET", LIST).headers,
    "error-body-retryable": lambda org: "retryable" in org.call("GET", LIST, key=None).json(),
    "unknown-route-not-found": lambda org: org.client.get(API + "/nope").json()["type"] == "NOT_FOUND",
    "revoked-key-distinct-type": _revoked_key_differs,
    "wrong-secret-distinct-detail": _wrong_secret_detail_differs,
    "wrong-org-404": lambda org: org.call("GET", "/recipients/cnosuchorg").status_code == 404,
    "retry-after-missing": lambda org: "retry-after" not in _after_rate_limit(org).headers,
    "rate-limit-off": lambda org: _after_rate_limit(org).status_code == 200,
}


def _server(name: str) -> TestClient:
    ref = Reference(Config(operator_token="op-token-for-tests"))
    mutants.apply(ref, name)
    return TestClient(build_app(ref), raise_server_exceptions=False, client=("127.0.0.1", 50000))


def test_the_mutants_checked_here_are_registered():
    assert set(DEVIATES) <= set(mutants.MUTANTS)
    assert not set(mutants.MUTANTS) & set(mutants.VARIANTS)
    assert all(m.reqs and m.doc for m in mutants.MUTANTS.values())


@pytest.mark.parametrize("name", sorted([*mutants.MUTANTS, *mutants.VARIANTS]))
def test_every_mutant_and_variant_applies(name):
    with _server(name) as client:
        assert client.get("/_operator/health").status_code == 200
        org = new_org(client)
        assert org.call("GET", LIST).status_code < 500


@pytest.mark.parametrize("name", sorted(DEVIATES))
def test_mutant_deviates_and_pristine_does_not(name):
    with _server(name) as client:
        assert DEVIATES[name](new_org(client)), f"{name} did not change behaviour"
    with TestClient(build_app(Reference(Config(operator_token="op-token-for-tests"))),
                    client=("127.0.0.1", 50000)) as client:
        assert not DEVIATES[name](new_org(client)), f"pristine server already shows {name}"


def test_extra_fields_variant():
    with _server("extra-fields") as client:
        org = new_org(client)
        product = org.call("POST", PRODUCTS, json=PRODUCT, idem="k").json()
        assert "x_vendor_extension" in product
        page = org.call("GET", PRODUCTS).json()
        assert "x_vendor_extension" in page and "x_vendor_extension" in page["data"][0]
        error = org.call("GET", LIST, key=None).json()
        assert error["type"] == "UNAUTHORIZED" and "x_vendor_extension" in error


def test_detail_wording_variant():
    with _server("detail-wording") as client:
        body = client.get(API + "/nope").json()
        assert body["type"] == "ROUTE_NOT_FOUND" and body["detail"].startswith("Request not completed")


def test_gzip_responses_variant():
    """Gzip only where the request admits it; the bytes decode to the same JSON answer."""
    with _server("gzip-responses") as client:
        org = new_org(client)
        asked = org.call("GET", LIST, key=None)
        assert asked.headers["content-encoding"] == "gzip" and asked.json()["type"] == "UNAUTHORIZED"
        for refusal in ("identity", "gzip;q=0"):
            plain = client.get(API + "/nope", headers={"accept-encoding": refusal})
            assert "content-encoding" not in plain.headers and plain.json()["type"] == "ROUTE_NOT_FOUND"


def test_unknown_name_is_a_clear_error():
    with pytest.raises(mutants.UnknownMutant, match="no-such-mutant"):
        mutants.apply(Reference(Config(operator_token="t")), "no-such-mutant")


MUTANTS_DIR = Path(mutants.__file__).parent
MODULES = sorted(MUTANTS_DIR.rglob("*.py"))


def _functions(path: Path) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)]


def test_every_patch_is_a_named_function():
    """A mutant or variant is found in a traceback or a profile by its name, and so is each wrapper it installs."""
    for entry in [*mutants.MUTANTS.values(), *mutants.VARIANTS.values()]:
        assert entry.patch.__name__ == entry.name.replace("-", "_"), entry.name
    unnamed = [f"{p.relative_to(MUTANTS_DIR)}:{f.lineno}" for p in MODULES for f in _functions(p) if f.name == "_"]
    assert not unnamed, f"functions named `_` under mutants/: {unnamed}"


def test_each_requirement_has_its_mutants_in_one_module():
    """The mutants that break one requirement are read together: no two modules hold mutants of the same id."""
    modules_of: dict[str, set[str]] = collections.defaultdict(set)
    for entry in mutants.MUTANTS.values():
        for req in entry.reqs:
            modules_of[req].add(entry.patch.__module__)
    split = {req: sorted(mods) for req, mods in modules_of.items() if len(mods) > 1}
    assert not split, f"requirements whose mutants live in more than one module: {split}"


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(MUTANTS_DIR)): n for p in MODULES if (n := len(p.read_text().splitlines())) > 400}
    assert not long, f"modules of mutants/ over 400 lines: {long}"


def test_the_listing_names_every_registered_mutant_and_variant():
    """What `--list-mutants` / `--list-variants` print (the kill matrix's input) is the registry, name for name."""
    for flag, table in (("--list-mutants", mutants.MUTANTS), ("--list-variants", mutants.VARIANTS)):
        out = subprocess.run([sys.executable, "-m", "payconform.reference", flag, "--json"], capture_output=True,
                             text=True, check=True).stdout
        listed = json.loads(out)
        assert [m["name"] for m in listed] == sorted(table)
        assert {m["name"]: tuple(m["reqs"]) for m in listed} == {n: e.reqs for n, e in table.items()}
    assert (len(mutants.MUTANTS), len(mutants.VARIANTS)) == (633, 67)
