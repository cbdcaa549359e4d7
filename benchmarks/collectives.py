"""CPU cost per collective of the collective observer (`straggler.timing.collectives`).

One process, a gloo world of one rank (the collective itself is then as cheap as gloo gets, so
the observer's share is as large as it can be), one torch thread. Each round times the same
loop of ``dist.all_reduce`` on a 4-float tensor with the observer off (no detector: nothing is
registered) and on, back to back, in a rotating order; the table shows the median over rounds
of each and of the per-round difference. Time is the process's CPU time (every thread: the
caller's kernel and the completion callback on gloo's worker thread), not wall time: on a
shared machine the time a thread waits for a core is not the observer's cost. Run:
``.venv/bin/python benchmarks/collectives.py [--ops 5000] [--rounds 9] [--baseline-ops SO]``.

``--baseline-ops`` loads another build of ``straggler._ops`` (e.g. an earlier commit's, built
with ``straggler.timing.native_observer.build_command``) and times its observer in the same
rounds, one at a time: before and after a change in one run, on the same load.

A first table times the observer alone, without gloo's round trip and its noise:
``straggler._ops.collectives_bench`` makes and completes a Work's future per iteration, with
and without the observer's bookkeeping around it (arrival, callback, completion), on one
thread, in C++; the same rounds also time the baseline build's when it has the function.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import tempfile
import time

import torch
import torch.distributed as dist
from straggler.timing import collectives


def _ns_per_op(n: int, tensor: torch.Tensor, async_op: bool) -> float:
    t0 = time.process_time_ns()
    if async_op:
        for _ in range(n):
            dist.all_reduce(tensor, async_op=True).wait()
    else:
        for _ in range(n):
            dist.all_reduce(tensor)
    return (time.process_time_ns() - t0) / n


def _load_baseline(path: str):
    """Another build of straggler._ops, loaded under its own init name (``_ops``)."""
    spec = importlib.util.spec_from_file_location("_ops", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"`--baseline-ops={path!r}` is not a loadable extension module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spread(values: list[float]) -> str:
    """Median and 25th-75th percentiles, in µs from ns."""
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return f"{statistics.median(values) / 1e3:+.2f} ({q[0] / 1e3:+.2f} to {q[2] / 1e3:+.2f})"


def _isolated(ops, baseline, ops_n: int, rounds: int) -> dict[str, list[float]]:
    """The observer's own cost, no backend (``_ops.collectives_bench``): CPU ns per iteration
    without the observer (``"off"``), with this build's (``"on"``) and, when the baseline build
    has the function, with its (``"base"``), in a rotating order, one of each per round."""
    runs = {"off": lambda: ops.collectives_bench(ops_n, False),
            "on": lambda: ops.collectives_bench(ops_n, True)}
    if baseline is not None and hasattr(baseline, "collectives_bench"):
        runs["base"] = lambda: baseline.collectives_bench(ops_n, True)
    for run in runs.values():  # warm up
        run()
    out: dict[str, list[float]] = {kind: [] for kind in runs}
    kinds = list(runs)
    for i in range(rounds):
        for kind in kinds[i % len(kinds):] + kinds[:i % len(kinds)]:
            out[kind].append(runs[kind]())
    return out


def main() -> None:
    """Print the tables (markdown): the observer's own cost, and ns per gloo collective."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--baseline-ops", default="",
                        help="another build of straggler._ops, timed in the same rounds")
    args = parser.parse_args()
    baseline = _load_baseline(args.baseline_ops) if args.baseline_ops else None
    torch.set_num_threads(1)
    from straggler import _ops

    load_start = os.getloadavg()[0]
    iso = _isolated(_ops, baseline, 20 * args.ops, 4 * args.rounds)
    store = os.path.join(tempfile.mkdtemp(prefix="straggler-bench-"), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    tensor = torch.ones(4)
    rows = []
    for label, async_op in (("all_reduce", False), ("all_reduce(async_op=True).wait()", True)):
        _ns_per_op(args.ops, tensor, async_op)  # warm up
        off, on, delta, base, base_delta = [], [], [], [], []
        for i in range(args.rounds):
            # The configurations in a rotating order: a drift of the machine's load within a
            # round falls on each in turn; each round's differences are paired.
            times = {}
            kinds = ["off", "on"] + (["base"] if baseline is not None else [])
            for kind in kinds[i % len(kinds):] + kinds[:i % len(kinds)]:
                if kind == "on":
                    collectives.start()
                elif kind == "base":
                    baseline.collectives_enable([])
                times[kind] = _ns_per_op(args.ops, tensor, async_op)
                if kind == "on":
                    collectives.stop()
                elif kind == "base":
                    baseline.collectives_disable()
            off.append(times["off"])
            on.append(times["on"])
            delta.append(times["on"] - times["off"])
            if baseline is not None:
                base.append(times["base"])
                base_delta.append(times["base"] - times["off"])
        rows.append((label, off, on, delta, base, base_delta))
    dist.destroy_process_group()
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {load_start:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end; {args.rounds} rounds x {args.ops} collectives\n")
    print(f"The observer alone, no backend (CPU ns per collective, {len(iso['off'])} rounds "
          f"x {20 * args.ops} iterations, rotating order; added: median of the paired "
          f"differences, 25th-75th percentiles):\n")
    print("| without observer (ns) | " + " | ".join(
        f"{'baseline' if kind == 'base' else 'this'} build (ns) | added (µs)"
        for kind in iso if kind != "off") + " |")
    print("|---|" + "---|---|" * (len(iso) - 1))
    cells = [f"{statistics.median(iso['off']):.0f}"]
    for kind in (k for k in iso if k != "off"):
        deltas = [b - a for a, b in zip(iso["off"], iso[kind], strict=True)]
        cells += [f"{statistics.median(iso[kind]):.0f}", _spread(deltas)]
    print("| " + " | ".join(cells) + " |\n")
    print("Per gloo collective, one rank (process CPU µs; added: median of the rounds' paired "
          "differences, 25th-75th percentiles):\n")
    if baseline is None:
        print("| collective | no detector (µs) | observer on (µs) | ratio | added (µs) |")
        print("|---|---|---|---|---|")
        for label, off, on, delta, _, _ in rows:
            a, b = statistics.median(off), statistics.median(on)
            print(f"| `{label}` | {a / 1e3:.2f} | {b / 1e3:.2f} | {b / a:.3f} | "
                  f"{_spread(delta)} |")
        return
    print("| collective | no detector (µs) | baseline build: added (µs) | this build: added (µs) |")
    print("|---|---|---|---|")
    for label, off, _, delta, _, base_delta in rows:
        print(f"| `{label}` | {statistics.median(off) / 1e3:.2f} | {_spread(base_delta)} | "
              f"{_spread(delta)} |")


if __name__ == "__main__":
    main()
