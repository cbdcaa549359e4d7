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


def main() -> None:
    """Print the table (markdown) of ns per collective, off vs on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--baseline-ops", default="",
                        help="another build of straggler._ops, timed in the same rounds")
    args = parser.parse_args()
    baseline = _load_baseline(args.baseline_ops) if args.baseline_ops else None
    torch.set_num_threads(1)
    store = os.path.join(tempfile.mkdtemp(prefix="straggler-bench-"), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    tensor = torch.ones(4)
    rows = []
    for label, async_op in (("all_reduce", False), ("all_reduce(async_op=True).wait()", True)):
        _ns_per_op(args.ops, tensor, async_op)  # warm up
        off, on, delta, base, base_delta = [], [], [], [], []
        for i in range(args.rounds):
            # The three configurations in a rotating order: a drift of the machine's load
            # within a round falls on each in turn.
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
            a, b = times["off"], times["on"]
            if baseline is not None:
                base.append(times["base"])
                base_delta.append(times["base"] - a)
            off.append(a)
            on.append(b)
            delta.append(b - a)
        rows.append((label, statistics.median(off), statistics.median(on),
                     statistics.median(delta),
                     statistics.median(base) if base else None,
                     statistics.median(base_delta) if base else None))
    dist.destroy_process_group()
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{args.rounds} rounds x {args.ops} collectives")
    if baseline is None:
        print("| collective | no detector (µs) | observer on (µs) | ratio | added (µs) |")
        print("|---|---|---|---|---|")
        for label, a, b, d, _, _ in rows:
            print(f"| `{label}` | {a / 1e3:.2f} | {b / 1e3:.2f} | {b / a:.3f} | "
                  f"{d / 1e3:+.2f} |")
        return
    print("| collective | no detector (µs) | baseline build (µs) | ratio | added (µs) | "
          "this build (µs) | ratio | added (µs) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, a, b, d, c, cd in rows:
        print(f"| `{label}` | {a / 1e3:.2f} | {c / 1e3:.2f} | {c / a:.3f} | {cd / 1e3:+.2f} | "
              f"{b / 1e3:.2f} | {b / a:.3f} | {d / 1e3:+.2f} |")


if __name__ == "__main__":
    main()
