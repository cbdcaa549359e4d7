"""The sanitizer stress programs of the Makefile (``stress-bins``), built on demand.

`make test-setup` builds them; a test asks make for the ones it runs, which is nothing to do
after the set-up and builds what is missing or stale elsewhere (a bare `pytest`, an edited
source). One make at a time (a lock file): pytest-xdist runs the two sanitizer tests side by
side, and their programs share objects (csrc/driver/cuda_driver.cpp's).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

from sim.simcuda import REPO

BUILD = REPO / "build" / "cpp-test"


def stress_build(*targets: str) -> list[Path]:
    """``make`` each of `targets` (paths under build/cpp-test/); their paths, built."""
    assert shutil.which("make") and shutil.which("g++"), \
        "no make or g++: `make test` needs both to build the simulators"
    BUILD.mkdir(parents=True, exist_ok=True)
    paths = [BUILD / t for t in targets]
    with open(BUILD / ".stress.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = subprocess.run(["make", "--no-print-directory", "-j2", "-C", str(REPO),
                              *(str(p.relative_to(REPO)) for p in paths)],
                             capture_output=True, text=True, timeout=280, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    return paths
