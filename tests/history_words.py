"""The words that tell how a product was built rather than what it is: session and issue numbers, "used
to", "fixed since", "no longer", paths outside the repository (looked for in prose by `test_docs` and in
comments and docstrings by `test_history_in_code`)."""

from __future__ import annotations

import re

ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
            "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\\d+(?:st|nd|rd|th)")
HISTORY = {
    "a session by its ordinal": re.compile(rf"\b(?:{ORDINALS})\s+session", re.I),
    "a session number": re.compile(r"\bsessions?\s+#?\d+", re.I),
    "an issue number": re.compile(r"\bissues?\s+#?\d+", re.I),
    "a #number": re.compile(r"(?<![\w&])#\d+\b"),
    "'used to'": re.compile(r"\bused to\b", re.I),
    "'fixed since'": re.compile(r"\bfixed since\b", re.I),
    "'no longer'": re.compile(r"\bno longer\b", re.I),
    "a path outside the repository": re.compile(r"\.\./shared\b"),
}
