"""Record real per-step, per-section times of a small DDP job on gloo (the policy's evidence).

    python benchmarks/record_traces.py --name idle-4r --world 4 --seconds 60
    python benchmarks/record_traces.py --name loaded-4r --world 4 --seconds 60 --busy 2

Each rank trains the demo's MLP (examples/demo.py) with DistributedDataParallel on gloo and
times every step's sections with ``time.perf_counter_ns`` (no detector: the trace is the raw
evidence a report summarises):

- ``data``: the next batch, made on the host (``torch.randn``: host compute);
- ``forward``: forward pass and loss (compute);
- ``backward``: autograd and DDP's all-reduce (communication: every rank waits for the slowest);
- ``optimizer``: the parameter update (compute).

``--busy N`` starts N processes spinning on the CPU for the whole recording (``--busy`` equal to
the core count loads every core), to record a loaded machine. The machine is shared: the 1-minute
load average before and after, the core count and the busy processes are stored with the trace.

The trace is one ``.npz`` (compressed): ``times_ms`` float16 ``(ranks, steps, sections)``,
``end_s`` float32 ``(steps,)`` (rank 0's step end, seconds from the first step), ``sections``
and ``meta`` (JSON). tests/data/traces/ holds the recorded ones; benchmarks/replay.py replays
them through the report arithmetic and the policy.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import platform
import socket
import sys
import time
from pathlib import Path

import numpy as np

SECTIONS = ("data", "forward", "backward", "optimizer")
OUT_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "traces"


def _spin(stop_at: float) -> None:
    """A busy process: spin until ``stop_at`` (monotonic seconds)."""
    x = 0
    while time.monotonic() < stop_at:
        x += 1


def _rank(rank: int, world: int, port: int, args: argparse.Namespace, out: mp.Queue) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    torch.manual_seed(0)
    h = args.hidden
    model = torch.nn.Sequential(torch.nn.Linear(h, h), torch.nn.ReLU(), torch.nn.Linear(h, h),
                                torch.nn.ReLU(), torch.nn.Linear(h, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(rank)
    stop = torch.zeros(1)
    times = np.zeros((args.max_steps, len(SECTIONS)), dtype=np.float64)
    ends = np.zeros(args.max_steps, dtype=np.float64)
    clock = time.perf_counter_ns
    dist.barrier()
    start = clock()
    steps = 0
    for step in range(args.max_steps):
        t0 = clock()
        x = torch.randn(args.batch, h, generator=gen)
        y = torch.randint(0, 10, (args.batch,), generator=gen)
        t1 = clock()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        t2 = clock()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        t3 = clock()
        opt.step()
        t4 = clock()
        times[step] = (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        ends[step] = t4 - start
        steps = step + 1
        if step % 50 == 49:  # rank 0's clock ends the run; every rank runs the same steps
            stop[0] = float(rank == 0 and (t4 - start) * 1e-9 >= args.seconds)
            dist.broadcast(stop, src=0)
            if stop[0] > 0:
                break
    dist.destroy_process_group()
    out.put((rank, times[:steps] * 1e-6, ends[:steps] * 1e-9))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def record(args: argparse.Namespace) -> Path:
    """Run the ranks (and the busy processes); write the trace; return its path."""
    ctx = mp.get_context("spawn")
    load_before = os.getloadavg()
    busy = [ctx.Process(target=_spin, args=(time.monotonic() + args.seconds + 60,), daemon=True)
            for _ in range(args.busy)]
    for p in busy:
        p.start()
    if busy:
        time.sleep(2.0)  # let the load settle before the first step
    out: mp.Queue = ctx.Queue()
    port = _free_port()
    ranks = [ctx.Process(target=_rank, args=(r, args.world, port, args, out))
             for r in range(args.world)]
    for p in ranks:
        p.start()
    results = dict((r, (t, e)) for r, t, e in (out.get(timeout=args.seconds + 300)
                                               for _ in ranks))
    for p in ranks:
        p.join()
    load_after = os.getloadavg()
    for p in busy:  # the processes this script started, by handle
        p.terminate()
        p.join()
    steps = min(t.shape[0] for t, _ in results.values())
    times = np.stack([results[r][0][:steps] for r in range(args.world)])
    meta = {"name": args.name, "world": args.world, "busy_processes": args.busy,
            "cpu_count": os.cpu_count(), "loadavg_1m_before": load_before[0],
            "loadavg_1m_after": load_after[0], "hidden": args.hidden, "batch": args.batch,
            "steps": steps, "seconds": float(results[0][1][steps - 1]),
            "backend": "gloo", "device": "cpu", "host": platform.node(),
            "python": platform.python_version(),
            "torch": __import__("torch").__version__,
            "recorded_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "note": "shared machine: other engineers' jobs ran too (see the load averages)"}
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.name}.npz"
    np.savez_compressed(path, times_ms=times.astype(np.float16),
                        end_s=results[0][1][:steps].astype(np.float32),
                        sections=np.array(SECTIONS), meta=np.array(json.dumps(meta)))
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--name", required=True, help="trace name (file name without .npz)")
    p.add_argument("--world", type=int, default=4, help="ranks (default 4)")
    p.add_argument("--seconds", type=float, default=60.0, help="recording length (default 60)")
    p.add_argument("--busy", type=int, default=0, help="busy processes loading the CPU")
    p.add_argument("--hidden", type=int, default=256, help="MLP width (default 256, the demo's)")
    p.add_argument("--batch", type=int, default=64, help="batch per rank (default 64)")
    p.add_argument("--max-steps", type=int, default=20000, help="step cap (default 20000)")
    p.add_argument("--out", type=Path, default=OUT_DIR, help=f"folder (default {OUT_DIR})")
    args = p.parse_args(argv)
    if args.world < 2:
        p.error(f"--world={args.world} must be at least 2")
    path = record(args)
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        med = np.median(z["times_ms"].astype(np.float64), axis=1)
    print(f"{path} ({path.stat().st_size / 1024:.0f} KiB): {meta['steps']} steps in "
          f"{meta['seconds']:.1f} s, load {meta['loadavg_1m_before']:.1f} -> "
          f"{meta['loadavg_1m_after']:.1f}; median ms per rank x section:")
    for r, row in enumerate(med):
        print(f"  rank {r}: " + "  ".join(f"{s} {v:.3f}" for s, v in zip(SECTIONS, row,
                                                                      strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
