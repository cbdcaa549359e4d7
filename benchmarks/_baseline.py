"""A git revision of this repository as a baseline, measured in the same run as this tree.

`baseline_tree` checks the revision out into a temporary git worktree; `run_in_tree` runs a
script in a fresh interpreter that imports `straggler` from a given tree's sources (not through
the editable install's finder) with this tree's built extensions (straggler._core, _ops), so
both trees are imported the same way. Pass a revision whose C++ matches this tree's.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

_PRELUDE = r"""
import glob, importlib.util, os, sys
_tree, _built = sys.argv[1], sys.argv[2]
del sys.argv[1:3]
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_editable")]


class _BuiltExtensions:  # straggler._core and _ops from this tree's build
    def find_spec(self, name, path=None, target=None):
        if name in ("straggler._core", "straggler._ops"):
            found = glob.glob(os.path.join(_built, name.split(".")[1] + ".*.so"))
            return importlib.util.spec_from_file_location(name, found[0]) if found else None
        return None


sys.meta_path.insert(0, _BuiltExtensions())
sys.path.insert(0, _tree)
sys.path.insert(1, _tree + "/benchmarks")
assert importlib.util.find_spec("straggler").origin.startswith(_tree)  # not imported yet
"""


@contextlib.contextmanager
def baseline_tree(rev: str) -> Iterator[str]:
    """The path of a temporary git worktree of `rev`, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "baseline")
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", path, rev],
                       check=True)
        try:
            yield path
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", path],
                           check=False)


def short_rev(rev: str) -> str:
    """`rev`'s short commit id."""
    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev],
                          capture_output=True, text=True, check=True).stdout.strip()


def run_in_tree(tree: str, script: str, args: Sequence[str] = (), timeout_s: float = 600
                ) -> Any:
    """Run `script` in a fresh interpreter on `tree`'s sources; its last stdout line as JSON."""
    import straggler._core

    built = str(Path(straggler._core.__file__).parent)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("STRAGGLER_DISABLE", None)
    out = subprocess.run([sys.executable, "-c", _PRELUDE + script, tree, built, *args],
                         capture_output=True, text=True, timeout=timeout_s, env=env,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the script failed in {tree}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
