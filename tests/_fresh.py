"""Python code run in a fresh interpreter: what importing or starting something loads, not what
earlier tests in this process left behind."""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str, *flags: str) -> str:
    """The stripped stdout of `code` run by a new interpreter (this one's executable, `flags`
    before ``-c``); CalledProcessError when it fails."""
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.strip()
