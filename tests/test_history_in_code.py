"""The code's comments and docstrings describe it as it is: no session or issue numbers, no "used to" or
"fixed since", no paths outside the repository (the prose of README, docs and help texts: `test_docs`)."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import pytest

from .history_words import HISTORY

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("payconform", "suites", "tests", "benchmarks")
# "no longer" is the domain's word in code (a link no longer available, a key no longer registered)
WORDS = {what: pattern for what, pattern in HISTORY.items() if what != "'no longer'"}
ALLOWED = {
    # the words themselves, as the patterns this test and test_docs look for
    "tests/history_words.py": set(WORDS),
    "tests/test_history_in_code.py": set(WORDS),
    # the check that the vendored spec is the published one beside the checkout
    "tests/contract/test_requirements.py": {"a path outside the repository"},
}


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts)


def _found(path: Path) -> list[str]:
    """Each comment or string of ``path`` that tells how the code was built, with its line."""
    allowed = ALLOWED.get(path.relative_to(ROOT).as_posix(), set())
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [f"line {token.start[0]}: {what}: {' '.join(token.string.split())[:160]}"
            for token in tokens if token.type in (tokenize.COMMENT, tokenize.STRING)
            for what, pattern in WORDS.items() if what not in allowed and pattern.search(token.string)]


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_development_history_in_comments_and_docstrings(folder: str) -> None:
    found = {str(p.relative_to(ROOT)): hits for p in _sources() if p.relative_to(ROOT).parts[0] == folder
             for hits in [_found(p)] if hits}
    assert not found, "comments or strings that tell how the code was built; describe it as it is:\n" + "\n".join(
        f"  {path}: {hit}" for path, hits in found.items() for hit in hits)
