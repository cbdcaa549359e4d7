"""``straggler demo``: run the README demo, examples/demo.py of the source tree."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["demo_script", "run_demo"]


def demo_script() -> Path:
    """examples/demo.py next to the package (a checkout or an editable install)."""
    import straggler

    path = Path(straggler.__file__).resolve().parents[1] / "examples" / "demo.py"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the demo ships with the source tree; run `straggler "
                                "demo` from a checkout installed with `pip install -e .` (or "
                                "`make demo` there)")
    return path


def run_demo(args: Sequence[str]) -> int:
    """Run the demo in this Python with `args`; its exit status."""
    return subprocess.call([sys.executable, str(demo_script()), *args])
