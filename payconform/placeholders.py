"""The ``"{name}"`` placeholders of the profile's example bodies, and filling them in.

A profile body says what a request looks like; a placeholder marks a value each request needs fresh
(``{unique}``, ``{unique digits}``) or one only a test can know (``{destinationAccountId}``).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def fill(template: Any, values: dict[str, str]) -> Any:
    """A copy of a profile body with every `"{name}"` placeholder whose name is in `values` replaced."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)
    return template


def leading_digits() -> str:
    """Eight random digits, the first not zero: what keeps an account number unique."""
    return str(secrets.choice(range(1, 10))) + "".join(secrets.choice("0123456789") for _ in range(7))


def fresh_values(prefix: str = "pc") -> dict[str, str]:
    """Values for the placeholders every request needs fresh: ``{unique}`` and ``{unique digits}``."""
    return {"unique": f"{prefix}-{secrets.token_hex(6)}", "unique digits": leading_digits()}


def fresh_patterns(prefix: str = "pc") -> dict[str, str]:
    """The regular expressions ``fresh_values(prefix)`` always matches, by placeholder name."""
    return {"unique": re.escape(prefix) + "-[0-9a-f]{12}", "unique digits": "[1-9][0-9]{7}"}
