"""A profile mismatch: the target chose otherwise than the profile where the spec does not show the choice.

A test whose assumption from the profile does not hold on the target (a profile route the target does not
serve, an answer without the fields the profile lists, a sandbox selector without its outcome) raises
``ProfileMismatch``: the test ends as a skip whose reason is a ``Mismatch`` record, which ``read`` turns back
into the record, so the verdict ``profile_mismatch``, results.json, JUnit and the report all come from the one
reason. It is neither a failure of the target nor a pass: the run's exit code ignores it unless
``--strict-profile``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

PREFIX = "profile mismatch: "
_EXPECTED = "the profile says: "
_OVERRIDE = "set in the target file:"
_UNTOLD = "set in the target file's profile: "
_REQUEST_ID = "x-request-id: "
_INDENT = "  "


def _line(value: Any) -> str:
    """``value`` as one line of text: a string as it is, anything else as flow-style YAML."""
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True, width=10_000)
    return " ".join(str(text).split()).removesuffix(" ...")


def override_yaml(override: Mapping[str, Any]) -> str:
    """The YAML a user adds to the target file: ``override`` under ``profile:``."""
    return yaml.safe_dump({"profile": dict(override)}, sort_keys=False, allow_unicode=True, width=120)


@dataclass(frozen=True)
class Mismatch:
    """What a profile mismatch says: the profile entry, what the target did, what the profile says, the
    override under the target file's ``profile:`` that fits the target (None when it cannot be told), and
    the x-request-id of the answer that showed it."""

    entry: str
    seen: str
    expected: str | None = None
    override: dict[str, Any] | None = None
    request_id: str | None = None

    @property
    def reason(self) -> str:
        """The skip reason every output shows (its first line: the entry and what the target did)."""
        lines = [f"{PREFIX}{self.entry}: {self.seen}"]
        if self.expected is not None:
            lines.append(f"{_EXPECTED}{self.expected}")
        if self.override:
            lines.append(_OVERRIDE)
            lines += [_INDENT + ln for ln in override_yaml(self.override).splitlines()]
        else:
            lines.append(f"{_UNTOLD}{self.entry} (the value this deployment uses: not told by its answer)")
        if self.request_id:
            lines.append(f"{_REQUEST_ID}{self.request_id}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"entry": self.entry, "seen": self.seen, "expected": self.expected, "override": self.override,
                "request_id": self.request_id}


def read(reason: str | None) -> Mismatch | None:
    """The mismatch a skip reason states (the inverse of ``Mismatch.reason``), or None for another reason."""
    lines = (reason or "").strip().splitlines()
    if not lines or not lines[0].startswith(PREFIX):
        return None
    entry, _, seen = lines[0].removeprefix(PREFIX).partition(": ")
    expected = request_id = None
    block: list[str] = []
    for i, line in enumerate(lines[1:], 1):
        if line.startswith(_EXPECTED):
            expected = line.removeprefix(_EXPECTED)
        elif line.startswith(_REQUEST_ID):
            request_id = line.removeprefix(_REQUEST_ID).strip()
        elif line == _OVERRIDE:
            block = [ln.removeprefix(_INDENT) for ln in lines[i + 1:] if ln.startswith(_INDENT)]
    try:
        loaded = yaml.safe_load("\n".join(block)) if block else None
    except yaml.YAMLError:
        loaded = None
    override = loaded.get("profile") if isinstance(loaded, dict) else None
    return Mismatch(entry.strip(), seen.strip(), expected, override if isinstance(override, dict) else None,
                    request_id)


class ProfileMismatch(pytest.skip.Exception):
    """Raised by a test (or the client) when the target chose otherwise than the profile: the test ends with
    the verdict ``profile_mismatch``, naming ``entry`` (the dotted profile path), what the target did
    (``seen``), what the profile says (``expected``), the ``override`` for the target file's ``profile:``
    and the x-request-id of ``exchange``."""

    def __init__(self, entry: str, seen: str, *, expected: Any = None, override: Mapping[str, Any] | None = None,
                 exchange: Any = None) -> None:
        self.mismatch = Mismatch(
            entry=str(entry), seen=_line(seen), expected=None if expected is None else _line(expected),
            override=dict(override) if override else None,
            request_id=getattr(exchange, "request_id", None) if exchange is not None else None)
        super().__init__(self.mismatch.reason)


def merge(overrides: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """One override block from several: nested mappings merged, a later value winning a conflict."""
    out: dict[str, Any] = {}
    for override in overrides:
        for key, value in (override or {}).items():
            if isinstance(value, Mapping) and isinstance(out.get(key), dict):
                out[key] = merge([out[key], value])
            else:
                out[key] = merge([value]) if isinstance(value, Mapping) else value
    return out


def summary(tests: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """results.json's ``profile_mismatches``: one row per distinct mismatch (entry, seen, expected, override)
    with the tests that met it, in the order first met."""
    rows: dict[str, dict[str, Any]] = {}
    for test in tests:
        found = test.get("mismatch")
        if not found:
            continue
        key = repr((found["entry"], found["seen"], found.get("expected"), found.get("override")))
        row = rows.setdefault(key, {"entry": found["entry"], "seen": found["seen"],
                                    "expected": found.get("expected"), "override": found.get("override"),
                                    "tests": []})
        row["tests"].append(test["nodeid"])
    return list(rows.values())
