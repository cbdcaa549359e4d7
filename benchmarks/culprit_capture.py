"""Capture live gloo runs for the culprit estimator: every report's waits rows, as the reporting
rank attributes them, and (``loop`` job) every rank's arrival and completion of every
collective on the machine's steady clock, the ground truth of who made the others wait.

    python benchmarks/culprit_capture.py --out /tmp/culprits --job ddp --world 3 --factor 1.2
    python benchmarks/culprit_capture.py --table /tmp/culprits      # recall / false culprits

Jobs (rank ``--slow-rank`` slowed by ``--factor``, 1.0: a clean run):

- ``ddp``: `examples/demo.py`'s CPU job (an MLP of 256 with DistributedDataParallel, batch 64,
  sections ``forward``/``backward``/``optimizer``, a broadcast a step on a group of its own);
  the slow rank sleeps ``factor - 1`` times its forward's compute time inside ``forward``
  (``--how sleep``, the demo's injection) or spins that long (``--how spin``, a slower CPU);
- ``manual``: the same without DistributedDataParallel: the gradients all-reduced in one
  synchronous ``dist.all_reduce`` after ``backward`` (its caller waits in ``Work.wait()``, where
  DDP's reducer waits on the Work's future);
- ``loop``: `benchmarks/fault_injection.py`'s lock-step job (10 products of 96x96 in
  ``forward``, an all-reduce and a broadcast a step); the slow rank does ``factor - 1`` of that
  work more right after its section.

``--busy N`` runs N spinning processes beside the job (every core busy at N = 2). Each run is
one ``.npz`` in ``--out``: ``rows`` (reports, ranks, `straggler.analysis.waits.WIDTH`), the
conditions, the 1-minute load average at the start, and for ``loop`` ``arrival_ns`` and
``done_ns`` (ranks, collectives). ``--table`` replays every run's rows through
`straggler.analysis.waits.attribute` (and ``--before FILE``'s, an earlier version of it) and
prints, per condition, the share of reports naming the slow rank (recall), naming a healthy
rank (false culprits), and the time lost to the slow rank; ``--pack`` gathers the runs' rows
into one small file (tests/data/culprit_rows.npz, replayed by tests/analysis/test_waits.py).
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import socket
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LOOP_WORK = 10


def _spin() -> None:
    while True:
        pass


def _rank(rank: int, world: int, port: int, job: str, factor: float, how: str, slow_rank: int,
          seconds: float, interval: float, out: mp.Queue, root: int = 0, steps: int = 0) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    from straggler import Detector
    from straggler.reporting import generator

    rows: list[np.ndarray] = []
    attribute = generator.attribute_waits

    def keep(block, ranks, names=None):
        rows.append(np.array(block, dtype=np.float64))
        return attribute(block, ranks, names)

    generator.attribute_waits = keep
    Detector.initialize(report_time_interval=interval, comm_timeout_s=60, telemetry=False)
    slow = rank == slow_rank and factor > 1.0
    stop = torch.zeros(1)
    arrival: list[int] = []
    done: list[int] = []
    clock = time.monotonic_ns
    if job in ("ddp", "manual"):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 10))
        ddp = torch.nn.parallel.DistributedDataParallel(model) if job == "ddp" else model
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        gen = torch.Generator().manual_seed(rank)
        x, y = torch.randn(64, 256, generator=gen), torch.randint(0, 10, (64,), generator=gen)
        stop_group = dist.new_group(backend="gloo")
    else:
        a = torch.randn(96, 96)
        extra = round(LOOP_WORK * (factor - 1.0)) if slow else 0
        stop_group = None
    dist.barrier()
    start = time.monotonic()
    while True:
        if job in ("ddp", "manual"):
            with Detector.detection_section("forward", profile_cuda=False):
                t0 = time.perf_counter()
                loss = torch.nn.functional.cross_entropy(ddp(x), y)
                if slow:
                    more = (factor - 1.0) * (time.perf_counter() - t0)
                    if how == "sleep":
                        time.sleep(more)
                    else:
                        end = time.perf_counter() + more
                        while time.perf_counter() < end:
                            pass
            with Detector.detection_section("backward", kind="communication"):
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if job == "manual":  # DDP's all-reduce, waited for with Work.wait()
                    grads = [q.grad for q in model.parameters() if q.grad is not None]
                    flat = torch.cat([g.reshape(-1) for g in grads])
                    dist.all_reduce(flat)
                    torch._utils._unflatten_dense_tensors(flat, grads)
            with Detector.detection_section("optimizer", profile_cuda=False):
                opt.step()
        else:
            with Detector.detection_section("forward", profile_cuda=False):
                b = a
                for _ in range(LOOP_WORK):
                    b = torch.mm(b, a) * 0.01
            for _ in range(extra):
                b = torch.mm(b, a) * 0.01
            arrival.append(clock())
            dist.all_reduce(b[:1, :1].contiguous())
            done.append(clock())
        Detector.generate_report_if_interval_elapsed()
        if steps:  # a fixed number of steps: no broadcast a step
            steps -= 1
            if steps == 0:
                break
            continue
        stop[0] = float(rank == root and time.monotonic() - start > seconds)
        arrival.append(clock())
        dist.broadcast(stop, src=root, group=stop_group)
        done.append(clock())
        if stop[0] > 0:
            break
    Detector.shutdown()
    dist.destroy_process_group()
    out.put((rank, np.array(arrival), np.array(done), np.array(rows)))


def capture(job: str, world: int, factor: float, how: str, busy: int, seconds: float,
            interval: float, slow_rank: int, root: int = 0, steps: int = 0) -> dict:
    ctx = mp.get_context("spawn")
    spinners = [ctx.Process(target=_spin, daemon=True) for _ in range(busy)]
    for p in spinners:
        p.start()
    try:
        time.sleep(0.5 if busy else 0.0)
        load = os.getloadavg()[0]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        out: mp.Queue = ctx.Queue()
        procs = [ctx.Process(target=_rank, args=(r, world, port, job, factor, how, slow_rank,
                                                 seconds, interval, out, root, steps))
                 for r in range(world)]
        for p in procs:
            p.start()
        got = sorted((out.get(timeout=600) for _ in procs), key=lambda g: g[0])
        for p in procs:
            p.join()
    finally:
        for p in spinners:
            p.terminate()
            p.join()
    n = min(len(g[1]) for g in got)
    return {"rows": got[0][3], "arrival_ns": np.stack([g[1][:n] for g in got]),
            "done_ns": np.stack([g[2][:n] for g in got]), "job": job, "world": world,
            "factor": factor, "how": how, "busy": busy, "load": load,
            "slow_rank": slow_rank if factor > 1.0 else -1, "interval": interval,
            "end_load": os.getloadavg()[0], "root": root if not steps else -1}


def _estimator(path: Path | None):
    """`straggler.analysis.waits`, or the module in ``path`` (an earlier version of it, e.g.
    ``git show REV:straggler/analysis/waits.py > FILE``)."""
    import importlib.util

    from straggler.analysis import waits

    if path is None:
        return waits
    spec = importlib.util.spec_from_file_location("straggler.analysis._waits_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--before={path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def table(folder: Path, before: Path | None = None, skip: int = 0) -> str:
    """Per condition: reports, the reports naming the slow rank (recall) and a healthy rank
    (false culprits), the slow rank's time lost (median, % of the window), the load range;
    with ``before``, that estimator's numbers first (before -> now). The first ``skip`` reports
    of a run are left out (the first window holds the start-up)."""
    estimators = [_estimator(before), _estimator(None)] if before else [_estimator(None)]
    acc: dict[tuple, dict] = defaultdict(lambda: defaultdict(list))
    for f in sorted(folder.glob("*.npz")):
        with np.load(f) as run:
            if len(run["rows"]) <= skip:
                continue  # a run that failed before its reports
            key = (str(run["job"]), int(run["world"]), float(run["factor"]), str(run["how"]),
                   int(run["busy"]))
            slow = int(run["slow_rank"])
            a = acc[key]
            a["load"].append(float(run["load"]))
            ranks = list(range(int(run["world"])))
            for block in run["rows"][skip:]:
                a["window"].append(float(np.nanmax(block[:, 0])))
                for i, estimator in enumerate(estimators):
                    waits, culprits = estimator.attribute(block, ranks)
                    named = {c.rank for c in culprits}
                    a[f"hit{i}"].append(slow in named)
                    a[f"false{i}"].append(bool(named - {slow}))
                    if slow >= 0 and slow in waits.ranks:
                        a[f"lost{i}"].append(waits[slow].time_lost_s / a["window"][-1])

    def both(a: dict, name: str, fmt) -> str:
        return " -> ".join(fmt(a[f"{name}{i}"]) for i in range(len(estimators)))

    def share(values: list) -> str:
        return f"{sum(values)}/{len(values)}"

    def lost(values: list) -> str:
        return f"{100 * np.median(values):.0f}" if values else "-"

    lines = ["| job | ranks | slowed | busy | load | reports (window s) | slow rank named | "
             "healthy rank named | time lost to the slow rank, % of the window (median) |",
             "|---|---:|---|---:|---|---|---:|---:|---:|"]
    for key in sorted(acc):
        job, world, factor, how, busy = key
        a = acc[key]
        slowed = f"x{factor:g} {how}" if factor > 1 else "clean"
        lines.append(
            f"| {job} | {world} | {slowed} | {busy} | {min(a['load']):.1f}-{max(a['load']):.1f} "
            f"| {len(a['window'])} ({min(a['window']):.1f}-{max(a['window']):.1f}) "
            f"| {both(a, 'hit', share) if factor > 1 else '-'} | {both(a, 'false', share)} "
            f"| {both(a, 'lost', lost) if factor > 1 else '-'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--table", type=Path, help="print the table of the runs in this folder")
    p.add_argument("--pack", type=Path, nargs=2, metavar=("FOLDER", "FILE"),
                   help="gather the rows of the runs in FOLDER into FILE (one array per run, "
                        "named after its conditions: tests/data/culprit_rows.npz)")
    p.add_argument("--before", type=Path,
                   help="with --table: an earlier straggler/analysis/waits.py to compare with")
    p.add_argument("--job", choices=("ddp", "manual", "loop"), default="ddp")
    p.add_argument("--world", type=int, action="append")
    p.add_argument("--factor", type=float, action="append")
    p.add_argument("--how", choices=("sleep", "spin"), default="sleep")
    p.add_argument("--busy", type=int, action="append")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--slow-rank", type=int, default=None,
                   help="the slowed rank (default: the last)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--root", type=int, default=0, help="the rank the per-step broadcast is from")
    p.add_argument("--steps", type=int, default=0,
                   help="run this many steps with no per-step broadcast (0: --seconds, stopped "
                        "by a broadcast a step)")
    args = p.parse_args(argv)
    if args.table:
        print(table(args.table, args.before))
        return 0
    if args.pack:
        folder, target = args.pack
        runs = {}
        for f in sorted(folder.glob("*.npz")):
            with np.load(f) as run:
                name = (f"{run['job']}_w{int(run['world'])}_f{float(run['factor']):g}_"
                        f"b{int(run['busy'])}_slow{int(run['slow_rank'])}")
                runs[name] = run["rows"]
                runs[name + "_load"] = np.float32(run["load"])
        np.savez_compressed(target, **runs)
        print(f"{target}: {len(runs) // 2} runs")
        return 0
    if args.out is None:
        p.error("--out or --table is needed")
    args.out.mkdir(parents=True, exist_ok=True)
    for _ in range(args.repeats):
        for busy in args.busy or [0]:
            for world in args.world or [3]:
                for factor in args.factor or [1.0, 1.2]:
                    slow = world - 1 if args.slow_rank is None else args.slow_rank
                    run = capture(args.job, world, factor, args.how, busy, args.seconds,
                                  args.interval, slow, args.root, args.steps)
                    name = (f"{args.job}_w{world}_f{factor:g}_{args.how}_b{busy}_r{args.root}"
                            f"s{args.steps}_"
                            f"{int(time.time())}")
                    np.savez_compressed(args.out / f"{name}.npz", **run)
                    print(f"{name}: {len(run['rows'])} reports, "
                          f"{run['arrival_ns'].shape[1]} collectives, load {run['load']:.1f}",
                          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
