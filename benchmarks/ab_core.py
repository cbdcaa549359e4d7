"""Paired A/B of two builds of ``straggler._core`` on benchmarks/bench_timer_engine.py.

    cp .venv/lib/python3.*/site-packages/straggler/_core*.so /tmp/core_a.so  # before a change
    # ... change csrc/, make install ...
    .venv/bin/python benchmarks/ab_core.py /tmp/core_a.so \\
        .venv/lib/python3.*/site-packages/straggler/_core*.so [--rounds 8]

Each round runs the timer benchmark once per build, each in a fresh process that loads that
file as ``straggler._core``; the builds alternate (A B A B ...), so load from other processes
hits both alike. Prints a markdown table: per variant the best ns per pair of A and of B, their
ratio (the best run is the least disturbed one), and the median over rounds of the per-round
ratio B / A (below 1: B is faster).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().with_name("bench_timer_engine.py")

# Runs BENCH with argv[2:] after loading the extension file argv[1] as straggler._core.
LOADER = """
import importlib.machinery, importlib.util, runpy, sys
path, bench, *args = sys.argv[1:]
loader = importlib.machinery.ExtensionFileLoader("straggler._core", path)
spec = importlib.util.spec_from_file_location("straggler._core", path, loader=loader)
module = importlib.util.module_from_spec(spec)
loader.exec_module(module)
sys.modules["straggler._core"] = module
import straggler
straggler._core = module
sys.argv = [bench, *args]
runpy.run_path(bench, run_name="__main__")
"""


def run_once(core: Path, pairs: int, repeats: int) -> dict[str, float]:
    """ns per pair by variant, from one run of the benchmark against ``core``."""
    out = subprocess.run(
        [sys.executable, "-c", LOADER, str(core), str(BENCH), "--pairs", str(pairs),
         "--repeats", str(repeats)],
        capture_output=True, text=True, check=True, timeout=600).stdout
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].replace(",", "").isdigit():
            rows[cells[0]] = float(cells[1].replace(",", ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the baseline build (an _core*.so file)")
    parser.add_argument("b", type=Path, help="the build compared with it")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    for name in ("a", "b"):
        if not getattr(args, name).is_file():
            parser.error(f"`{name}={str(getattr(args, name))!r}` must be an extension file")
    if min(args.rounds, args.pairs, args.repeats) < 1:
        parser.error(f"`rounds={args.rounds}`, `pairs={args.pairs}` and "
                     f"`repeats={args.repeats}` must be positive")

    runs: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
    for _ in range(args.rounds):
        for name in ("a", "b"):
            runs[name].append(run_once(getattr(args, name), args.pairs, args.repeats))

    print(f"A: {args.a}\nB: {args.b}\n{args.rounds} rounds (A then B), {args.pairs} pairs per "
          f"run, best of {args.repeats} per run\n")
    print("| variant | A best ns | B best ns | B / A (best) | B / A (median of rounds) |")
    print("|---|---:|---:|---:|---:|")
    for variant in runs["a"][0]:
        a = [r[variant] for r in runs["a"]]
        b = [r[variant] for r in runs["b"]]
        ratio = statistics.median(y / x for x, y in zip(a, b, strict=True))
        print(f"| {variant} | {min(a):,.0f} | {min(b):,.0f} | {min(b) / min(a):.2f} | "
              f"{ratio:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
