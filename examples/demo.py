"""Demo: 4 CPU ranks train a small model with DDP on gloo; one rank is slowed on purpose.

    python examples/demo.py                      # rank 2 runs its forward pass 3x slower
    python examples/demo.py --slowdown 1.0       # nobody is slowed: "stragglers: none"

The script spawns its ranks itself (no torchrun needed). Each rank trains an MLP with
DistributedDataParallel on synthetic data and wraps its step in detection sections:

- ``forward``: the forward pass and the loss (pure compute, no communication);
- ``backward``: autograd plus DDP's gradient all-reduce. It is declared
  ``kind="communication"``: the all-reduce makes every rank wait for the slowest one, so its
  duration is longest on the ranks that are *not* slow. It is never timed or scored;
- ``optimizer``: the parameter update (compute).

How the slowdown is injected: inside ``forward`` the slow rank measures its own forward compute
time t and then sleeps ``(slowdown - 1) * t``, so its forward takes ``slowdown`` times as
long as its own compute would (like a GPU clocked down by that factor). Because the all-reduce
evens out the whole step, only sections that exclude communication can see this.

Output: ``injected straggler: rank R`` (or ``none``), each report as a table, then for each
persistent straggler its cause (``Report.format_causes()``: node, label, evidence), then one line
``stragglers: rank R (node N), ...`` naming the ranks flagged (relative section or GPU score
below the threshold) in at least half of the reports, or ``stragglers: none``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import sys
import time
from typing import List, Optional

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--world-size", type=int, default=4, help="number of CPU ranks (default 4)")
    p.add_argument("--slow-rank", type=int, default=2, help="rank to slow down (default 2)")
    p.add_argument("--slowdown", type=float, default=3.0,
                   help="factor on the slow rank's forward time; 1.0 = no straggler (default 3)")
    p.add_argument("--steps", type=int, default=1000, help="training steps (default 1000)")
    p.add_argument("--report-interval", type=float, default=2.0,
                   help="seconds between reports (Detector report_time_interval, default 2)")
    p.add_argument("--threshold", type=float, default=0.75,
                   help="score below which a rank is flagged (default 0.75, as NVRx)")
    p.add_argument("--hidden", type=int, default=256, help="MLP width (default 256)")
    p.add_argument("--batch", type=int, default=64, help="batch size per rank (default 64)")
    args = p.parse_args(argv)
    if args.world_size < 2:
        p.error(f"--world-size={args.world_size} must be at least 2")
    if not 0 <= args.slow_rank < args.world_size:
        p.error(f"--slow-rank={args.slow_rank} must be in [0, {args.world_size})")
    if args.slowdown < 1.0:
        p.error(f"--slowdown={args.slowdown} must be >= 1.0")
    if args.steps < 20:
        p.error(f"--steps={args.steps} must be at least 20 (the interval is measured first)")
    return args


def flagged_ranks(report, threshold: float) -> set:
    """StragglerIds with a relative section or GPU score below `threshold` in this report."""
    found = report.identify_stragglers(gpu_rel_threshold=threshold,
                                       section_rel_threshold=threshold,
                                       gpu_indiv_threshold=threshold,
                                       section_indiv_threshold=threshold)
    ids = set(found["straggler_gpus_relative"])
    for by_section in found["straggler_sections_relative"].values():
        ids |= by_section
    return ids


def train(rank: int, args: argparse.Namespace, port: int) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=args.world_size,
                            timeout=datetime.timedelta(seconds=60))
    from straggler import Detector

    slow = rank == args.slow_rank and args.slowdown > 1.0
    gpu = torch.cuda.is_available()  # on a CPU-only machine: host time, and no warning about it
    Detector.initialize(report_time_interval=args.report_interval, comm_timeout_s=60.0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(args.batch, args.hidden, generator=gen)
    y = torch.randint(0, 10, (args.batch,), generator=gen)

    reports = []
    for _ in range(args.steps):
        with Detector.detection_section("forward", profile_cuda=gpu):
            t0 = time.perf_counter()
            loss = torch.nn.functional.cross_entropy(ddp(x), y)
            if slow:  # the injected slowdown: sleep (slowdown - 1) x own compute time
                time.sleep((args.slowdown - 1.0) * (time.perf_counter() - t0))
        with Detector.detection_section("backward", kind="communication"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with Detector.detection_section("optimizer", profile_cuda=gpu):
            opt.step()
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:  # rank 0 only (gather_on_rank0=True)
            reports.append(report)
            print(report.format_table(threshold=args.threshold), flush=True)
    Detector.shutdown()
    if rank == 0:
        named = persistent_stragglers(reports, args.threshold)
        for line in cause_lines(reports, named):
            print(line, flush=True)
        print(verdict(reports, args.threshold), flush=True)
    dist.destroy_process_group()


def persistent_stragglers(reports, threshold: float) -> list:
    """StragglerIds flagged in at least half of the reports, by rank."""
    counts: dict = {}
    for report in reports:
        for sid in flagged_ranks(report, threshold):
            counts[sid] = counts.get(sid, 0) + 1
    return sorted((sid for sid, n in counts.items() if 2 * n >= len(reports)),
                  key=lambda sid: sid.rank)


def cause_lines(reports, named) -> List[str]:
    """`Report.format_causes()` lines of the named ranks, from the last report diagnosing each."""
    lines = []
    for sid in named:
        report = next((r for r in reversed(reports) if sid.rank in r.causes), None)
        if report is not None:
            prefix = f"rank {sid.rank} ("
            lines += [line for line in report.format_causes().splitlines()
                      if line.startswith(prefix)]
    return lines


def verdict(reports, threshold: float) -> str:
    """The final line: ranks flagged in at least half of the reports."""
    if not reports:
        return "stragglers: none (no report was generated: run more --steps)"
    named = persistent_stragglers(reports, threshold)
    if not named:
        return "stragglers: none"
    return "stragglers: " + ", ".join(f"rank {s.rank} (node {s.node})" for s in named)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    injected = f"rank {args.slow_rank}" if args.slowdown > 1.0 else "none"
    print(f"injected straggler: {injected}"
          + (f" (forward x{args.slowdown:g})" if args.slowdown > 1.0 else ""), flush=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.start_processes(train, args=(args, free_port()), nprocs=args.world_size, join=True,
                       start_method="spawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
