"""The target file's JSON Schema and the field reference of docs/target-file.md come from the one description
in payconform/target/fields.py: both are current, the page names every field and no other, every target file
the repository shows validates, and the schema and the loader accept and refuse the same files.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from payconform.target import Target, TargetConfigError
from payconform.target.fields import CREDENTIALS, FIELDS
from payconform.target.reference import BEGIN, END, replace_reference
from payconform.target.schema import SCHEMA_PATH, json_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "target-file.md"
REGENERATE = "python -m payconform.target.schema --write"
KEY = "svc_test_" + "a" * 32 + "_" + "B" * 43
LIVE = "svc_live_" + "c" * 32 + "_" + "D" * 43
BASE = "http://127.0.0.1:8123/business/api/v1"
VALIDATOR = jsonschema.Draft7Validator(json_schema())


def _errors(document: Any) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in VALIDATOR.iter_errors(document)]


def _field_names() -> set[str]:
    """Every field's name as the page gives it: top-level, ``webhooks.NAME``, ``operator.NAME``, and each
    credential by its own name."""
    return {name for f in FIELDS for name in (f.name, *(sub.name if f.fields is CREDENTIALS else f"{f.name}.{sub.name}"
                                                        for sub in f.fields))}


def test_schema_file_is_current():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), f"target.schema.json is stale: {REGENERATE}"
    jsonschema.Draft7Validator.check_schema(json_schema())


def test_page_reference_is_current():
    text = PAGE.read_text(encoding="utf-8")
    assert replace_reference(text) == text, f"docs/target-file.md's field reference is stale: {REGENERATE}"


NAME = re.compile(r"`([a-z]+(?:_[a-z]+)*(?:\.[a-z]+(?:_[a-z]+)*)*):?`")


def test_page_names_every_field_and_no_other():
    """Every field is named on the page, and the text written by hand names no other: a backticked snake_case
    name there is a field or a credential, a dotted path that starts with a field is one (`profile` is open:
    its entries are the profile's)."""
    text = PAGE.read_text(encoding="utf-8")
    known = _field_names()
    missing = sorted(known - {m.group(1) for m in NAME.finditer(text)})
    assert not missing, f"docs/target-file.md does not name: {missing}"
    head, rest = text.split(BEGIN, 1)
    by_hand = head + rest.split(END, 1)[1]
    top = {f.name for f in FIELDS}
    named = {m.group(1) for m in NAME.finditer(by_hand)}
    known |= {f"credentials.{f.name}" for f in CREDENTIALS}
    unknown = sorted(n for n in named if n not in known and not n.startswith("profile.")
                     and ("_" in n if "." not in n else n.split(".")[0] in top))
    assert not unknown, f"docs/target-file.md names fields that do not exist: {unknown}"


def _yaml_blocks(page: Path) -> list[tuple[str, Any]]:
    text = page.read_text(encoding="utf-8")
    return [(f"{page.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}", yaml.safe_load(m.group(1)))
            for m in re.finditer(r"```yaml\n(.*?)```", text, re.S)]


def _examples() -> list[tuple[str, Any]]:
    """The target files the repository shows: README's and the docs' YAML blocks with a ``base_url``, and the
    files of contract/examples/ (a ``*.profile.yaml`` there is the content of a target file's ``profile:``)."""
    shown = [(where, doc) for page in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
             for where, doc in _yaml_blocks(page) if isinstance(doc, dict) and "base_url" in doc]
    for path in sorted((ROOT / "contract" / "examples").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if path.name.endswith(".profile.yaml"):
            doc = {"base_url": BASE, "org_id": "ckorg1", "profile": doc}
        shown.append((str(path.relative_to(ROOT)), doc))
    return shown


EXAMPLES = _examples()


def test_the_repository_shows_target_files():
    assert {where.split(":")[0] for where, _ in EXAMPLES} >= {"README.md", "docs/target-file.md"}


@pytest.mark.parametrize("where, document", EXAMPLES, ids=[where for where, _ in EXAMPLES])
def test_example_target_files_validate(where: str, document: Any):
    assert not _errors(document), f"{where} does not follow target.schema.json: {_errors(document)}"


def test_provisioned_reference_target_validates(ref_target):
    """What ``payconform.provision`` writes for the reference server (every credential, a pool, an operator)."""
    _, path = ref_target
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert not _errors(document), _errors(document)
    assert set(document["credentials"]) >= {"api_key", "api_key_pool", "read_only_key", "live_key"}


GOOD = [
    {"base_url": BASE, "org_id": "ckorg1"},
    {"base_url": BASE + "/", "org_id": "ck1", "other_org_id": "ck2", "credentials": {"api_key": "env:PC_KEY"}},
    {"base_url": "https://h.example/x/business/api/v1", "org_id": "ck1",
     "credentials": {"api_key_pool": [KEY, KEY], "live_key": LIVE, "read_only_key": None},
     "operator": {"adapter": "reference", "url": "http://h/_operator", "token": "tok"},
     "webhooks": {"listen": "0.0.0.0:8900", "public_url": "https://tunnel.example"},
     "rate_limit": 50, "ip_rate_limit": 900, "request_timeout": 2.5,
     "profile": {"fuzz": {"include_operations": "all"}}},
    {"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "mypkg.ops:Adapter", "region": "eu"}},
]
BAD = [
    {"org_id": "ck1"},
    {"base_url": "ftp://h/business/api/v1", "org_id": "ck1"},
    {"base_url": "http://h/api", "org_id": "ck1"},
    {"base_url": BASE + "?x=1", "org_id": "ck1"},
    {"base_url": BASE},
    {"base_url": BASE, "org_id": "org_123"},
    {"base_url": BASE, "org_id": "ck/1"},
    {"base_url": BASE, "org_id": "ck1", "credentials": {"api_key": LIVE}},
    {"base_url": BASE, "org_id": "ck1", "credentials": {"live_key": KEY}},
    {"base_url": BASE, "org_id": "ck1", "credentials": {"api_key_pool": [LIVE]}},
    {"base_url": BASE, "org_id": "ck1", "credentials": {"nope_key": KEY}},
    {"base_url": BASE, "org_id": "ck1", "credentials": {"signing_private_key": "not a key"}},
    {"base_url": BASE, "org_id": "ck1", "rate_limt": 5},
    {"base_url": BASE, "org_id": "ck1", "rate_limit": 0},
    {"base_url": BASE, "org_id": "ck1", "request_timeout": 0},
    {"base_url": BASE, "org_id": "ck1", "request_timeout": 601},
    {"base_url": BASE, "org_id": "ck1", "webhooks": {"public_ur": "http://x"}},
    {"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "reference"}},
    {"base_url": BASE, "org_id": "ck1", "operator": {"adapter": "not a class"}},
]


@pytest.mark.parametrize("document", GOOD)
def test_schema_and_loader_accept_the_same(document: dict):
    assert not _errors(document)
    Target.from_dict(document, environ={"PC_KEY": KEY})


@pytest.mark.parametrize("document", BAD)
def test_schema_and_loader_refuse_the_same(document: dict):
    assert _errors(document)
    with pytest.raises(TargetConfigError):
        Target.from_dict(document)


def test_the_package_ships_the_schema():
    """The wheel takes the whole payconform/ directory, and nothing keeps the generated schema out of it."""
    hatch = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]
    wheel = hatch["build"]["targets"]["wheel"]
    assert "payconform" in wheel["packages"] and not wheel.get("exclude")
    assert SCHEMA_PATH.is_relative_to(ROOT / "payconform")
