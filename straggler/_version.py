"""The package version: from the installed metadata, else from the checkout's pyproject.toml."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

__all__ = ["package_version"]

_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def package_version() -> str:
    """``straggler``'s version; "0+unknown" when neither the metadata nor pyproject.toml say."""
    try:
        return metadata.version("straggler")
    except metadata.PackageNotFoundError:  # imported from a checkout that was never installed
        return pyproject_version(_PYPROJECT) or "0+unknown"


def pyproject_version(path: Path) -> str | None:
    """The ``[project]`` table's ``version`` in the pyproject.toml at ``path`` (None: absent)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    # A regex, not tomllib: Python 3.10 has no tomllib, and the field is one plain string.
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    found = project and re.search(r'^version\s*=\s*"([^"]+)"', project.group(1), re.M)
    return found.group(1) if found else None
