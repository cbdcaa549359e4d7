"""Every repository path named in the docs, the comments and the docstrings exists (issue #24
item 7: search-and-replace residue, a module's old path left behind after a move)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = ("straggler", "csrc", "tests", "benchmarks", "docs", "examples", "tools", "cmake",
       "third_party")
# A path: a top-level folder of the repository, then at least one more component.
PATH = re.compile(r"(?<![\w./$-])((?:" + "|".join(TOP) + r")/[\w./*{}-]*[\w/*}])")
# Not paths of this repository: glob patterns, placeholders, generated files, other projects'
# files that happen to share a folder name.
SKIP = re.compile(r"[*{}<>]|\.\.\.|^tests/\.\.\.|\.so$")
SOURCES = ["README.md", "Makefile", "CMakeLists.txt", "pyproject.toml", "docs/*.md",
           "benchmarks/**/*.md", "benchmarks/**/*.py", "straggler/**/*.py", "straggler/*.pyi",
           "csrc/**/*.cpp", "csrc/**/*.h", "csrc/**/*.cu", "tests/**/*.py", "tests/**/*.cpp",
           "tests/**/*.h", "tests/**/*.md", "examples/**/*.py", "tools/**/*.py", "cmake/*.cmake"]
# Not ours on purpose: Megatron-LM's examples/rl/README.md (where its flags come from), the
# made-up test files of tests/test_gpu_check.py and tools/gpu_check.py's docstring, NVRx's own
# unit suite (tests/straggler/unit), and straggler/_ops_src/, which CMake puts into the wheel.
FOREIGN = ("examples/rl/README.md", "tests/x.py", "tests/test_x.py", "tests/straggler/unit",
           "straggler/_ops_src")


def _named_paths():
    for pattern in SOURCES:
        for source in sorted(ROOT.glob(pattern)):
            if ".venv" in source.parts or "build" in source.parts:
                continue
            text = source.read_text(errors="replace")
            for lineno, line in enumerate(text.splitlines(), 1):
                for m in PATH.finditer(line):
                    path = m.group(1).rstrip(".")
                    if SKIP.search(path) or path.startswith(FOREIGN):
                        continue
                    yield f"{source.relative_to(ROOT)}:{lineno}", path


def test_every_path_named_in_docs_and_comments_exists():
    missing = sorted({f"{where}: {path}" for where, path in _named_paths()
                      if not (ROOT / path).exists()})
    assert missing == []


def test_the_check_finds_paths():
    found = {path for _, path in _named_paths()}
    assert "straggler/detector.py" in found and "docs/architecture.md" in found
