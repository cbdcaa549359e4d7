"""Cost of the zero-code attach on the demo model (CPU, gloo): attached against not attached.

One run, two ranks spawned here, the demo's model (examples/demo.py: three Linear layers of
256, batch 64, DistributedDataParallel, SGD, cross entropy), its batches through a
``DataLoader`` (so the attach's ``dataloader`` section runs too). The ranks alternate blocks of
steps without and with the attach, in lockstep, in ABBA order so that a drift in the machine's
load falls on both alike. For an attached block each rank builds the
`straggler.attach.worker.AttachedJob` that ``straggler run`` builds after ``init_process_group``
(optimizer step hook, ``step`` and ``dataloader`` sections, report interval counting, the
collective observer) and closes it after the block; a block's first 40 steps are not timed.
Printed:

- per variant, the median over blocks of the step's wall time and of the training thread's CPU
  time per step (rank 0), with the interquartile range; the difference of the medians;
- the attach's own per-step cost, timed alone in thread CPU time: one optimizer step hook call
  (section exit, interval count, section entry) plus one ``DataLoader`` batch through the
  patched ``__next__`` against the unpatched one, in ns, and that cost as a share of the step;
- a report's cost (rank 0, median of forced reports), amortised over the default 60 s interval.

    python benchmarks/attach_overhead.py            # 1-3 minutes on 2 cores
    python benchmarks/attach_overhead.py --quick
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import socket
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset

HIDDEN, BATCH = 256, 64  # examples/demo.py's CPU model


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                               torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                               torch.nn.Linear(HIDDEN, 10))


def _loader(rank: int, steps: int) -> DataLoader:
    gen = torch.Generator().manual_seed(rank)
    data = TensorDataset(torch.randn(steps * BATCH, HIDDEN, generator=gen),
                         torch.randint(0, 10, (steps * BATCH,), generator=gen))
    return DataLoader(data, batch_size=BATCH)


def _block(ddp: torch.nn.Module, opt: torch.optim.Optimizer, loader: DataLoader,
           warmup: int) -> tuple[float, float]:
    """(wall seconds, training-thread CPU seconds) per step over one pass of `loader`, after
    its first `warmup` steps (untimed: the attach's first boundaries, the report interval's
    first estimate, happen once per run, not per step).

    The CPU time of the thread that runs the step (and the attach's hook and sections) is what
    the attach can add; it does not count the time the thread waits for the all-reduce or for
    other processes of a shared machine, so it stays readable where wall time does not."""
    dist.barrier()
    t0 = c0 = 0.0
    n = 0
    for i, (x, y) in enumerate(loader):
        if i == warmup:
            t0, c0, n = time.perf_counter(), time.thread_time(), 0
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        n += 1
    return (time.perf_counter() - t0) / n, (time.thread_time() - c0) / n


def _hook_cost_ns(job, opt: torch.optim.Optimizer, n: int) -> float:
    """Thread CPU ns of one optimizer step hook call of the attach (no report due)."""
    hook = job._on_optimizer_step
    t0 = time.thread_time_ns()
    for _ in range(n):
        hook(opt, (), {})
    return (time.thread_time_ns() - t0) / n


def _next_cost_ns(next_fn, loader: DataLoader, n: int) -> float:
    """Thread CPU ns per batch of calling `next_fn` (a ``__next__``) on an iterator of
    `loader`."""
    it = iter(loader)
    t0 = time.thread_time_ns()
    for _ in range(n):
        next_fn(it)
    return (time.thread_time_ns() - t0) / n


def _patch_cost_ns(n: int, rounds: int) -> float:
    """ns the attach's ``__next__`` adds per batch: the patched and the original method on the
    same kind of iterator, alternated `rounds` times (median of the differences)."""
    from torch.utils.data.dataloader import _BaseDataLoaderIter

    patched = _BaseDataLoaderIter.__next__
    original = patched.__wrapped__
    loader = DataLoader(TensorDataset(torch.zeros(n, 4)), batch_size=1)
    diffs = [_next_cost_ns(patched, loader, n) - _next_cost_ns(original, loader, n)
             for _ in range(rounds)]
    return statistics.median(diffs)


def _worker(rank: int, world: int, port: int, args: argparse.Namespace, out: dict) -> None:
    torch.set_num_threads(1)
    from straggler.attach.settings import AttachSettings
    from straggler.attach.worker import AttachedJob

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    ddp = torch.nn.parallel.DistributedDataParallel(_model())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    warmup = 40
    loader = _loader(rank, warmup + args.steps)
    settings = AttachSettings(report_interval_s=60.0, quiet=True)
    _block(ddp, opt, loader, warmup)  # warm-up
    wall: dict[str, list[float]] = {"not attached": [], "attached": []}
    cpu: dict[str, list[float]] = {"not attached": [], "attached": []}
    for b in range(2 * args.blocks):
        attached = (b % 4) in (1, 2)  # ABBA: a drift in the load falls on both alike
        job = AttachedJob(settings) if attached else None
        name = "attached" if attached else "not attached"
        w, c = _block(ddp, opt, loader, warmup)
        wall[name].append(w)
        cpu[name].append(c)
        if job is not None:
            job.close()
    # The attach's own per-step cost, timed alone.
    job = AttachedJob(settings)
    hook_ns = statistics.median(_hook_cost_ns(job, opt, args.hook_calls) for _ in range(5))
    next_ns = _patch_cost_ns(2000, 15)
    report_ms = []
    for _ in range(args.reports):  # a report after a few steps, as in training
        for _step, (x, y) in zip(range(20), loader, strict=False):
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        t0 = time.perf_counter()
        job.core.generate_report()
        report_ms.append((time.perf_counter() - t0) * 1e3)
    job.close()
    if rank == 0:
        def spread(v: list[float]) -> float:  # interquartile range / median
            q = statistics.quantiles(v, n=4)
            return (q[2] - q[0]) / statistics.median(v)

        out.update(times={k: statistics.median(v) for k, v in wall.items()},
                   spread={k: spread(v) for k, v in wall.items()},
                   cpu={k: statistics.median(v) for k, v in cpu.items()},
                   cpu_spread={k: spread(v) for k, v in cpu.items()},
                   hook_ns=hook_ns, next_ns=next_ns,
                   report_ms=statistics.median(report_ms))
    dist.destroy_process_group()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--steps", type=int, default=300, help="steps per block (default 300)")
    p.add_argument("--blocks", type=int, default=10, help="blocks of each variant (default 10)")
    p.add_argument("--hook-calls", type=int, default=20000)
    p.add_argument("--reports", type=int, default=10)
    p.add_argument("--quick", action="store_true", help="100 steps, 4 blocks")
    args = p.parse_args()
    if args.quick:
        args.steps, args.blocks, args.hook_calls, args.reports = 100, 4, 5000, 4
    os.environ.setdefault("STRAGGLER_QUIET", "1")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_worker, args=(args.world_size, port, args, out), nprocs=args.world_size)
        res = dict(out)
    base, with_ = res["times"]["not attached"], res["times"]["attached"]
    per_step_ns = res["hook_ns"] + res["next_ns"]
    print(f"demo model (MLP {HIDDEN}x3, batch {BATCH}), DDP on {args.world_size} gloo ranks, "
          f"{args.blocks} blocks of {args.steps} steps per variant, ABBA order; "
          f"{platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}\n")
    print("| variant | step, wall (rank 0) | IQR / median | step, training thread CPU | "
          "IQR / median |")
    print("|---|---|---|---|---|")
    for name in ("not attached", "attached"):
        print(f"| {name} | {res['times'][name] * 1e3:.3f} ms | {res['spread'][name]:.1%} | "
              f"{res['cpu'][name] * 1e3:.3f} ms | {res['cpu_spread'][name]:.1%} |")
    cpu_base, cpu_with = res["cpu"]["not attached"], res["cpu"]["attached"]
    print(f"\nattached vs not attached (medians of blocks): wall {(with_ / base - 1):+.2%}, "
          f"training thread CPU {(cpu_with / cpu_base - 1):+.2%}\n")
    print("| the attach's own cost (thread CPU) | ns | share of the median wall step |")
    print("|---|---|---|")
    for name, ns in (("optimizer step hook (section exit, interval count, section entry)",
                      res["hook_ns"]),
                     ("DataLoader batch through the patched __next__ (vs unpatched)",
                      res["next_ns"]),
                     ("per step, both", per_step_ns)):
        print(f"| {name} | {ns:,.0f} | {ns / (base * 1e9):.3%} |")
    report_share = res["report_ms"] / 60e3
    print(f"\na report: {res['report_ms']:.1f} ms on rank 0 (median of {args.reports}); every "
          f"60 s (the default interval) that is {report_share:.3%} of the run")
    print(f"\n(The run took {time.monotonic() - start:.0f} s.)")


if __name__ == "__main__":
    main()
