"""Where the contract, the suites and the report templates live.

In a repository checkout they sit beside the package (``<repo>/contract``, ``<repo>/suites``); in an
installed wheel they are bundled as ``payconform/_bundled/contract`` and ``payconform/_bundled/suites``.
``PAYCONFORM_CONTRACT_DIR`` and ``PAYCONFORM_SUITES_DIR`` override both (used by the project's own tests).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_DIR = PACKAGE_DIR / "_bundled"
TEMPLATES_DIR = PACKAGE_DIR / "templates"


def repo_root() -> Path | None:
    """The repository checkout the package lives in, or None for an installed wheel."""
    parent = PACKAGE_DIR.parent
    if (parent / "pyproject.toml").is_file() and ((parent / "contract").is_dir() or (parent / "suites").is_dir()):
        return parent
    return None


def _locate(name: str, env: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override).resolve()
    root = repo_root()
    if root is not None and (root / name).is_dir():
        return root / name
    bundled = BUNDLED_DIR / name
    if bundled.is_dir():
        return bundled
    # Neither exists yet: answer the checkout location so error messages point somewhere sensible.
    return (root or PACKAGE_DIR.parent) / name


def contract_dir() -> Path:
    """The ``contract/`` directory (requirements, catalogs, profile, OpenAPI documents)."""
    return _locate("contract", "PAYCONFORM_CONTRACT_DIR")


def suites_dir() -> Path:
    """The ``suites/`` directory (the conformance tests)."""
    return _locate("suites", "PAYCONFORM_SUITES_DIR")


def templates_dir() -> Path:
    """The jinja2 templates of the HTML report."""
    return TEMPLATES_DIR
