"""What getting the native op observer costs, for each way a plain `pip install` can get it.

Measures, on this machine and torch (docs/install.md records a run):

- the compile of `straggler._ops` with the loader's own command
  (straggler/timing/native_observer.py; the CMake build at install time compiles the same file
  with the same flags): wall and CPU seconds, best of ``--rounds``;
- resolving the observer in a fresh interpreter after ``import torch``: from the installed
  module, and from a build-cache hit (what every later process pays), median of ``--rounds``.

    .venv/bin/python benchmarks/observer_install.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESOLVE = """
import time, torch
t = time.perf_counter()
import straggler.timing.native_observer as no
{patch}
found = no.status(build=False)
assert found.native and found.source == "{source}", found
print((time.perf_counter() - t) * 1e3)
"""


def _compile_s(rounds: int, work: Path) -> tuple[float, float]:
    import torch
    from straggler.timing import native_observer as no

    root, compiler = no._source_root(), no._compiler()
    if root is None or compiler is None:
        raise SystemExit("needs the observer's sources and a C++ compiler")
    best_wall = best_cpu = float("inf")
    for i in range(rounds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(no.build_command(compiler, root, work / f"_ops{i}.so", torch), check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return best_wall, best_cpu


def _resolve_ms(rounds: int, work: Path) -> dict[str, float]:
    import straggler._ops as installed

    out = {}
    for source, patch in (("installed", ""),
                          ("cache", "no._installed = lambda v: (None, 'not installed')")):
        env = dict(os.environ, STRAGGLER_CACHE_DIR=str(work / "cache"))
        if source == "cache":  # seed the cache with a build for this torch
            code = (f"import straggler.timing.native_observer as no\n{patch}\n"
                    "print(no.status().detail.split('into ')[1])")
            target = Path(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                         capture_output=True, text=True).stdout.strip())
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(installed.__file__, target / Path(installed.__file__).name)
        times = [float(subprocess.run(
            [sys.executable, "-c", RESOLVE.format(patch=patch, source=source)], env=env,
            check=True, capture_output=True, text=True).stdout) for _ in range(rounds)]
        out[source] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wall, cpu = _compile_s(args.rounds, work)
        resolve = _resolve_ms(args.rounds, work)
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f}")
    print("| step | cost |\n|---|---:|")
    print(f"| compile straggler._ops (once per node and torch version) | {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU |")
    print(f"| resolve: installed module matches this torch | {resolve['installed']:.1f} ms |")
    print(f"| resolve: build-cache hit | {resolve['cache']:.1f} ms |")


if __name__ == "__main__":
    main()
