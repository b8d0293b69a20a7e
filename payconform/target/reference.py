"""The field reference of docs/target-file.md, made from ``fields`` so that the page names every field and no
other. It sits between two markers in the page; the text around them is written by hand.
"""

from __future__ import annotations

import json
from typing import Any

from .fields import CREDENTIALS, FIELDS, REQUIRED, UNSET, Field

BEGIN = ("<!-- field reference: generated from payconform/target/fields.py by "
         "`python -m payconform.target.schema --write` -->")
END = "<!-- end of the field reference -->"
TYPE_NAMES = {"string": "string", "integer": "integer", "number": "number", "array": "list", "object": "mapping"}


def _flags() -> dict[str, str]:
    """The command-line flag of each field that has one, by dotted field name."""
    from ..options import TARGET_FLAGS

    return {option.field: option.name for option in TARGET_FLAGS.values() if option.field}


def _value(field: Field) -> str:
    types = field.schema.get("type", ())
    names = [TYPE_NAMES[t] for t in ([types] if isinstance(types, str) else types) if t != "null"]
    text = " or ".join(names)
    if "items" in field.schema:
        text += f" of {TYPE_NAMES[field.schema['items']['type']]}s"
    bounds = [f"≥ {field.schema['minimum']}" if "minimum" in field.schema else "",
              f"> {field.schema['exclusiveMinimum']}" if "exclusiveMinimum" in field.schema else "",
              f"≤ {field.schema['maximum']}" if "maximum" in field.schema else ""]
    return ", ".join([text, *(b for b in bounds if b)])


def _default(field: Field) -> str:
    if field.default is REQUIRED:
        return "**required**"
    if field.default is UNSET:
        return ""
    return f"`{json.dumps(field.default)}`"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rows() -> list[tuple[str, Field]]:
    """(dotted name, field) of every field, in the file's order; the credentials have a table of their own."""
    rows: list[tuple[str, Field]] = []
    for field in FIELDS:
        rows.append((field.name, field))
        if field.fields is not CREDENTIALS:
            rows.extend((f"{field.name}.{sub.name}", sub) for sub in field.fields)
    return rows


def reference() -> str:
    """The generated part of the page: the fields, then the credentials, each with its flag."""
    flags = _flags()
    lines = ["| Field | Value | Default | Flag | What it is |", "|---|---|---|---|---|"]
    for name, field in _rows():
        flag = f"`{flags[name]}`" if name in flags else ""
        lines.append(f"| `{name}` | {_value(field)} | {_default(field)} | {flag} | {_cell(field.description)} |")
    lines += ["", "Under `credentials`:", "",
              "| Credential | What it is | What it unlocks | Flag |", "|---|---|---|---|"]
    for field in CREDENTIALS:
        flag = flags.get(f"credentials.{field.name}", "")
        lines.append(f"| `{field.name}` | {_cell(field.description)} | {_cell(field.unlocks)} | `{flag}` |")
    return "\n".join(lines)


def replace_reference(page: str) -> str:
    """``page`` with the text between the markers replaced by the current reference."""
    if BEGIN not in page or END not in page:
        raise ValueError(f"the page has no field reference markers: add\n{BEGIN}\n{END}")
    head, rest = page.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{BEGIN}\n\n{reference()}\n\n{END}{tail}"  # blank lines: the tables are not read as HTML
