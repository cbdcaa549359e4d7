"""Cost of one start/stop pair through Python, per TimerEngine backend.

Baseline in the same run: a bare ``time.perf_counter_ns()`` pair (what a pure-Python host timer
costs at least). The CUDA rows use the simulated driver (build/sim/libcuda.so.1, `make sim`)
unless STRAGGLER_LIBCUDA is set, so they measure the engine's own overhead plus the simulator's,
not a GPU's; on a GPU machine run with STRAGGLER_LIBCUDA=libcuda.so.1 for the real figure.

    .venv/bin/python benchmarks/bench_timer_engine.py [--pairs 50000] [--repeats 15]

Prints a markdown table; each row is the best of ``repeats`` runs (least disturbed by other
processes; variants take turns), in ns per pair including the Python loop.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("STRAGGLER_LIBCUDA", str(REPO / "build" / "sim" / "libcuda.so.1"))

from straggler import _core  # noqa: E402  (reads STRAGGLER_LIBCUDA when first used)


def best_ns_per_pair(bodies: dict[str, object], pairs: int, repeats: int) -> dict[str, float]:
    """Best of ``repeats`` timings of each ``body(pairs)``, in ns per pair.

    Variants take turns within each round, so a burst of load from other processes hits them
    alike instead of skewing whichever ran during it.
    """
    best = dict.fromkeys(bodies, float("inf"))
    for _ in range(repeats):
        for name, body in bodies.items():
            t0 = time.perf_counter_ns()
            body(pairs)
            best[name] = min(best[name], (time.perf_counter_ns() - t0) / pairs)
    return best


def empty_loop(n: int) -> None:
    for _ in range(n):
        pass


def perf_counter_pair(n: int) -> None:
    clock = time.perf_counter_ns
    for _ in range(n):
        clock()
        clock()


def engine_pair_by_id(engine: _core.TimerEngine):
    t = engine.timer_id("bench")
    start, stop = engine.start, engine.stop

    def body(n: int) -> None:
        for _ in range(n):
            start(t)
            stop(t)
    return body


def engine_pair_by_name(engine: _core.TimerEngine):
    start, stop = engine.start, engine.stop

    def body(n: int) -> None:
        for _ in range(n):
            start("bench")
            stop("bench")
    return body


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    if args.pairs < 1 or args.repeats < 1:
        parser.error(f"`pairs={args.pairs}` and `repeats={args.repeats}` must be positive")

    bodies: dict[str, object] = {
        "empty Python loop (reference)": empty_loop,
        "bare `time.perf_counter_ns()` pair (baseline)": perf_counter_pair,
    }
    ok, reason = _core.cuda_status()
    engines = [_core.TimerEngine("host")] + ([_core.TimerEngine("cuda")] if ok else [])
    for engine in engines:
        label = "host clock" if engine.backend == "host" else (
            "CUDA events, simulated driver" if "build/sim" in reason else "CUDA events")
        by_id = engine_pair_by_id(engine)
        by_id(10_000)  # warm-up: the event pool fills
        bodies[f"TimerEngine({engine.backend!r}) start/stop by id: {label}"] = by_id
        bodies[f"TimerEngine({engine.backend!r}) start/stop by name: {label}"] = \
            engine_pair_by_name(engine)
    best = best_ns_per_pair(bodies, args.pairs, args.repeats)
    for engine in engines:
        engine.flush()
        engine.close()
    rows = list(best.items())

    baseline = rows[1][1]
    print(f"Machine: {cpu_name()}, {os.cpu_count()} logical CPUs, Python "
          f"{platform.python_version()}, {platform.system()} {platform.release()}")
    print(f"CUDA: {reason}")
    print(f"{args.pairs} pairs per run, best of {args.repeats} runs\n")
    print("| variant | ns per pair | x baseline |")
    print("|---|---:|---:|")
    for name, ns in rows:
        print(f"| {name} | {ns:,.0f} | {ns / baseline:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
