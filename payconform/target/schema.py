"""The target file's JSON Schema and the field reference of docs/target-file.md, both made from ``fields``.

``payconform/schemas/target.schema.json`` ships with the package so that an editor completes and checks a
target file; it and the page's reference are generated, never edited by hand. Regenerate both with
``python -m payconform.target.schema --write``; ``--check`` exits 1 when either is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import paths
from .fields import FIELDS, REQUIRED, UNSET, Field
from .reference import replace_reference

SCHEMA_PATH = paths.PACKAGE_DIR / "schemas" / "target.schema.json"


def _value_schema(field: Field) -> dict[str, Any]:
    schema: dict[str, Any] = {"description": field.description, **field.schema}
    if field.default not in (UNSET, REQUIRED):
        schema["default"] = field.default
    if field.fields:
        schema["properties"] = {f.name: _value_schema(f) for f in field.fields}
        schema["additionalProperties"] = field.open
    return schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 7, which editors' YAML and JSON support reads) of a target file."""
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "payconform target file",
        "description": "The deployment under test: payconform run --target FILE (see docs/target-file.md). A "
                       "credential or operator.token written env:NAME is read from the environment variable NAME.",
        "type": "object",
        "required": [f.name for f in FIELDS if f.default is REQUIRED],
        "properties": {f.name: _value_schema(f) for f in FIELDS},
        "additionalProperties": False,
    }


def schema_text() -> str:
    """The schema file's text, as written: stable key order, so a stale file shows as a diff."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def _docs_page() -> Path | None:
    root = paths.repo_root()
    return root / "docs" / "target-file.md" if root else None


def stale() -> list[Path]:
    """The generated files that differ from what the description gives."""
    out = []
    if not SCHEMA_PATH.is_file() or SCHEMA_PATH.read_text(encoding="utf-8") != schema_text():
        out.append(SCHEMA_PATH)
    page = _docs_page()
    if page is not None:
        text = page.read_text(encoding="utf-8")
        if replace_reference(text) != text:
            out.append(page)
    return out


def write() -> list[Path]:
    """Regenerate the schema file and the page's reference; answers the files that changed."""
    changed = stale()
    SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
    page = _docs_page()
    if page is not None:
        page.write_text(replace_reference(page.read_text(encoding="utf-8")), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m payconform.target.schema",
                                     description="Print the target file's JSON Schema, or regenerate its files.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true",
                        help="write payconform/schemas/target.schema.json and the reference in docs/target-file.md")
    action.add_argument("--check", action="store_true", help="exit 1 when either is stale")
    ns = parser.parse_args(argv)
    if ns.write:
        for path in write():
            print(f"wrote {path}")
        return 0
    if ns.check:
        old = stale()
        for path in old:
            print(f"stale: {path} (python -m payconform.target.schema --write)")
        return 1 if old else 0
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
