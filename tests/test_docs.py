"""The documentation: README is a short door into the docs site, the site builds with every link valid, and
no page tells how the product was built (`history_words`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .history_words import HISTORY

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 150
RUN_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/payconform run"
TEST_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/python -m pytest -n 2 --durations=15"
)
PROSE = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _sh_blocks(markdown: str, heading: str) -> list[str]:
    """The ```sh blocks of one level-2 section of ``markdown``."""
    section = markdown.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_readme_is_a_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, at most {README_MAX_LINES}: move the detail to a page under docs/")


def test_readme_quick_start_is_the_two_commands_ci_runs():
    blocks = _sh_blocks(README.read_text(encoding="utf-8"), "Quick start")
    assert blocks == [RUN_COMMAND, TEST_COMMAND]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.rstrip().splitlines()[-1] == TEST_COMMAND


def test_readme_links_point_at_files_of_the_repository():
    text = README.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]
    assert targets, "README.md links to no page of the documentation"
    missing = [t for t in targets if not (ROOT / t.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


@pytest.mark.parametrize("page", PROSE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_development_history(page: Path):
    found = [f"line {number}: {what}: {line.strip()}"
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for what, pattern in HISTORY.items() if pattern.search(line)]
    assert not found, (f"{page.name} tells how the product was built; describe it as it is:\n  "
                       + "\n  ".join(found))


def test_site_builds_with_every_link_valid(tmp_path: Path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs and mkdocs-material are not installed (pip install -e '.[dev]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    assert (tmp_path / "site" / "index.html").exists()


def _help_pages(path: tuple[str, ...] = ()) -> dict[tuple[str, ...], str]:
    """`payconform [COMMAND ...] --help` for the whole command tree, read as a user reads it."""
    import contextlib
    import io

    from payconform.cli.parser import build_parser

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        build_parser().parse_args([*path, "--help"])
    pages = {path: out.getvalue()}
    listed = out.getvalue().split("positional arguments:", 1)[-1].split("options:", 1)[0]
    for name in re.findall(r"^ {4}(\w[\w-]*) ", listed, re.M):
        pages.update(_help_pages((*path, name)))
    return pages


def test_no_development_history_in_help_texts():
    """The command line's help (every subcommand, every option, the pytest plugin's options from the same
    table) speaks to its user as the product is."""
    from payconform.options import OPTIONS

    pages = _help_pages()
    assert {("run",), ("receiver",), ("profile", "check")} <= set(pages), f"the help walk found only {sorted(pages)}"
    texts = [*pages.values(), *(option.help for option in OPTIONS)]
    found = [f"{what}: {text}" for text in texts for what, pattern in HISTORY.items() if pattern.search(text)]
    assert not found, "help texts that tell how the product was built:\n  " + "\n  ".join(found)
