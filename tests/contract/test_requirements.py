"""The requirements catalog and the error and limit catalogs: complete, well-formed, quoting the spec.

`contract/requirements.yaml` is the denominator of every coverage figure and the source of every
failure message's quote, so its quotes must be the spec's own words, and every id a test names must
exist in it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "contract" / "spec" / "service-interface.md"
SHARED_SPEC = ROOT.parent / "shared" / "spec" / "service-interface.md"
PARTS = ["conventions", "resources", "states", "endpoints", "authentication", "events", "errors", "limits",
         "versioning"]
NEEDS = {"api_key", "read_only_key", "refunds_key", "crypto_key", "live_key", "revoked_key", "expired_key",
         "pinned_key", "second_org", "signing_key", "webhook_receiver", "operator", "clock", "real_time",
         "profile", "isolation", "state_url"}
SUBJECTS = ("server", "receiver")
ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$")


def _load(name: str) -> dict:
    return yaml.safe_load((ROOT / "contract" / name).read_text(encoding="utf-8"))


CATALOG = _load("requirements.yaml")
REQS = CATALOG["requirements"]
IDS = {r["id"] for r in REQS}


def test_parts_are_the_nine_parts_of_the_spec_in_order() -> None:
    assert [p["slug"] for p in CATALOG["parts"]] == PARTS


def test_ids_are_unique_and_well_formed() -> None:
    ids = [r["id"] for r in REQS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert not [i for i in ids if not ID.match(i)]


def _problems(req: dict) -> list[str]:
    found = []
    if req.get("part") not in PARTS:
        found.append(f"part {req.get('part')!r}")
    if not isinstance(req.get("section"), str) or not req["section"]:
        found.append("no section")
    if not isinstance(req.get("needs"), list) or not set(req["needs"]) <= NEEDS:
        found.append(f"needs {req.get('needs')!r}")
    if req.get("subject", "server") not in SUBJECTS:
        found.append(f"subject {req.get('subject')!r}")
    if not isinstance(req.get("testable"), bool):
        found.append("testable is not a boolean")
    elif not req["testable"] and not req.get("reason"):
        found.append("untestable without a reason")
    if req["id"].endswith("-NOT-SHOWN") and (req.get("testable") or req.get("reason") != "not shown"):
        found.append("a not-shown entry must be untestable with reason 'not shown'")
    return found


def test_every_entry_is_complete() -> None:
    bad = {r["id"]: p for r in REQS if (p := _problems(r))}
    assert not bad, bad


def test_entries_follow_the_spec_order_of_parts() -> None:
    """Per subject: the receiver-side entries follow the server's, in the spec's order among themselves."""
    subjects = [r.get("subject", "server") for r in REQS]
    assert subjects == sorted(subjects, key=SUBJECTS.index)
    for subject in SUBJECTS:
        order = [PARTS.index(r["part"]) for r in REQS if r.get("subject", "server") == subject]
        assert order == sorted(order)


TOLERANCE_KEYS = {"reading", "because"}


def _tolerance_problems(req: dict) -> list[str]:
    """`tolerates` is optional; present, it is a non-empty list of {reading, because} non-empty strings."""
    readings = req.get("tolerates")
    if readings is None:
        return []
    if not isinstance(readings, list) or not readings:
        return ["tolerates is not a non-empty list"]
    return [f"tolerates[{i}] is not {{reading, because}} of non-empty strings" for i, t in enumerate(readings)
            if not isinstance(t, dict) or set(t) != TOLERANCE_KEYS
            or not all(isinstance(t[k], str) and t[k].strip() for k in TOLERANCE_KEYS)]


def test_tolerated_readings_are_well_formed() -> None:
    bad = {r["id"]: p for r in REQS if (p := _tolerance_problems(r))}
    assert not bad, bad


def test_every_tolerated_reading_quotes_the_spec() -> None:
    """The words that allow a reading are the spec's, so a tolerance cannot be argued from a paraphrase."""
    spec = " ".join(SPEC.read_text(encoding="utf-8").split())
    misquoted = [(r["id"], t["because"]) for r in REQS for t in r.get("tolerates") or []
                 for piece in str(t["because"]).split(" ... ") if " ".join(piece.split()) not in spec]
    assert not misquoted, f"`because` words that are not verbatim in the spec: {misquoted}"


def test_every_quote_is_the_spec_own_words() -> None:
    spec = " ".join(SPEC.read_text(encoding="utf-8").split())
    misquoted = [r["id"] for r in REQS
                 for piece in str(r["quote"]).split(" ... ") if " ".join(piece.split()) not in spec]
    assert not misquoted, f"quotes that are not verbatim in the spec: {misquoted}"


@pytest.mark.skipif(not SHARED_SPEC.exists(), reason="no ../shared/spec beside the checkout")
def test_vendored_spec_matches_the_published_one() -> None:
    """contract/spec/ is a copy so that reports and these tests work without ../shared; a drift means the
    spec changed and the catalog must be reviewed."""
    assert SPEC.read_bytes() == SHARED_SPEC.read_bytes()


def test_error_catalog_names_every_type_of_the_spec_once() -> None:
    errors = _load("catalog/errors.yaml")["errors"]
    types = [e["type"] for e in errors]
    assert len(types) == len(set(types))
    spec = SPEC.read_text(encoding="utf-8")
    in_tables = set(re.findall(r"^\| `([A-Z_]+)` \|", spec, flags=re.M))
    assert in_tables <= set(types), sorted(in_tables - set(types))
    for e in errors:
        assert e["requirement"] in IDS, e["type"]
        assert all(isinstance(s, int) and 100 <= s <= 599 for s in e["statuses"]), e["type"]


def test_limit_catalog_points_at_existing_requirements() -> None:
    def walk(node):
        if isinstance(node, dict):
            if "requirement" in node:
                yield node["requirement"]
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)
    missing = [r for r in walk(_load("catalog/limits.yaml")) if r not in IDS]
    assert not missing


def _suite_requirement_ids() -> list[tuple[str, str]]:
    found = []
    for path in (ROOT / "suites").rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "req"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "mark"):
                found += [(str(path.relative_to(ROOT)), a.value) for a in node.args if isinstance(a, ast.Constant)]
    return found


def test_every_requirement_a_suite_names_exists_and_is_testable() -> None:
    testable = {r["id"] for r in REQS if r["testable"] and r.get("subject", "server") == "server"}
    bad = [(p, i) for p, i in _suite_requirement_ids() if i not in testable]
    assert not bad, f"suite tests naming unknown or untestable requirements: {bad}"
