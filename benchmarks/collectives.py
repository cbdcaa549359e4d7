"""CPU cost per collective of the collective observer (`straggler.timing.collectives`).

One process, a gloo world of one rank (the collective itself is then as cheap as gloo gets, so
the observer's share is as large as it can be), one torch thread. Each round times the same
loop of ``dist.all_reduce`` on a 4-float tensor with the observer off (no detector: nothing is
registered) and on, back to back; the table shows the median over rounds of each and of the
per-round difference. Time is the process's CPU time (every thread: the caller's kernel and the
completion callback on gloo's worker thread), not wall time: on a shared machine the time a
thread waits for a core is not the observer's cost. Run:
``.venv/bin/python benchmarks/collectives.py [--ops 5000] [--rounds 9]``.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    """Print the table (markdown) of ns per collective, off vs on."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    store = os.path.join(tempfile.mkdtemp(prefix="straggler-bench-"), "store")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    tensor = torch.ones(4)
    rows = []
    for label, async_op in (("all_reduce", False), ("all_reduce(async_op=True).wait()", True)):
        _ns_per_op(args.ops, tensor, async_op)  # warm up
        off, on, delta = [], [], []
        for _ in range(args.rounds):
            a = _ns_per_op(args.ops, tensor, async_op)
            collectives.start()
            b = _ns_per_op(args.ops, tensor, async_op)
            collectives.stop()
            off.append(a)
            on.append(b)
            delta.append(b - a)
        rows.append((label, statistics.median(off), statistics.median(on),
                     statistics.median(delta)))
    dist.destroy_process_group()
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"{args.rounds} rounds x {args.ops} collectives")
    print("| collective | no detector (µs) | observer on (µs) | added per collective (µs) |")
    print("|---|---|---|---|")
    for label, a, b, d in rows:
        print(f"| `{label}` | {a / 1e3:.2f} | {b / 1e3:.2f} | {d / 1e3:+.2f} |")


if __name__ == "__main__":
    main()
