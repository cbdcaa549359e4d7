"""Cost of one start/stop pair through Python, per TimerEngine backend.

Baseline in the same run: a bare ``time.perf_counter_ns()`` pair (what a pure-Python host timer
costs at least). The CUDA rows use the simulated driver (build/sim/libcuda.so.1, `make sim`)
unless STRAGGLER_LIBCUDA is set, so they measure the engine's own overhead plus the simulator's,
not a GPU's; on a GPU machine run with STRAGGLER_LIBCUDA=libcuda.so.1 for the real figure.

    .venv/bin/python benchmarks/bench_timer_engine.py [--pairs 200000] [--repeats 5]

Prints a markdown table; each row is the best of ``repeats`` runs (least disturbed by other
processes), in ns per pair including the Python loop.
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


def best_ns_per_pair(body, pairs: int, repeats: int) -> float:
    """Best of ``repeats`` timings of ``body(pairs)``, in ns per pair."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        body(pairs)
        best = min(best, (time.perf_counter_ns() - t0) / pairs)
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
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.pairs < 1 or args.repeats < 1:
        parser.error(f"`pairs={args.pairs}` and `repeats={args.repeats}` must be positive")

    rows: list[tuple[str, float]] = []
    rows.append(("empty Python loop (reference)", best_ns_per_pair(empty_loop, args.pairs,
                                                                    args.repeats)))
    rows.append(("bare `time.perf_counter_ns()` pair (baseline)",
                 best_ns_per_pair(perf_counter_pair, args.pairs, args.repeats)))

    backends = ["host"]
    ok, reason = _core.cuda_status()
    if ok:
        backends.append("cuda")
    for backend in backends:
        with _core.TimerEngine(backend) as engine:
            label = "host clock" if backend == "host" else (
                "CUDA events, simulated driver" if "build/sim" in reason else "CUDA events")
            by_id = engine_pair_by_id(engine)
            by_id(10_000)  # warm-up: the event pool fills
            rows.append((f"TimerEngine({backend!r}) start/stop by id: {label}",
                         best_ns_per_pair(by_id, args.pairs, args.repeats)))
            by_name = engine_pair_by_name(engine)
            rows.append((f"TimerEngine({backend!r}) start/stop by name: {label}",
                         best_ns_per_pair(by_name, args.pairs, args.repeats)))
            engine.flush()

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
