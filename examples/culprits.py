"""Who the job waits for: 4 CPU ranks train with DDP on gloo; one rank stalls outside every
section (docs/culprits.md).

    python examples/culprits.py                  # rank 2's "data loading" stalls 40 ms a step
    python examples/culprits.py --stall-ms 0     # nobody stalls: no culprit
    python examples/culprits.py --report-log build/culprits.jsonl   # then `straggler summarize`

Only the compute is in a detection section; the stall is in the data loading, outside it, so
no section score can see it. The detector observes DDP's all-reduces, measures each rank's
waits there and names the rank the others wait for: each report prints its table, the causes
and the culprit line ("the job waited X s (Y %) for rank R").
"""

from __future__ import annotations

import argparse
import datetime
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _rank(rank: int, world: int, store: str, args: argparse.Namespace) -> None:
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    torch.set_num_threads(1)
    from straggler import Detector

    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    Detector.initialize(node_name=f"node{rank // 2}", report_time_interval=0, telemetry=False,
                        report_log=args.report_log or None)
    for report in range(args.reports):
        for _ in range(args.steps):
            if rank == args.slow_rank:
                time.sleep(args.stall_ms / 1e3)  # "data loading": outside every section
            batch = torch.randn(32, 64)
            with Detector.detection_section("compute", profile_cuda=False):
                time.sleep(0.01)  # the rest of the step's compute
                loss = model(batch).square().mean()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
        out = Detector.generate_report()
        if out is not None:
            print(f"--- report {report + 1}\n{out.format_table()}\n{out.format_causes()}\n",
                  flush=True)
    Detector.shutdown()
    dist.destroy_process_group()


def main() -> None:
    """Spawn the ranks and print rank 0's reports."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=4)
    parser.add_argument("--slow-rank", type=int, default=2)
    parser.add_argument("--stall-ms", type=float, default=40.0)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--reports", type=int, default=2)
    parser.add_argument("--report-log", default="")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    store = os.path.join(tempfile.mkdtemp(prefix="straggler-culprits-"), "store")
    mp.spawn(_rank, args=(args.world, store, args), nprocs=args.world)


if __name__ == "__main__":
    main()
