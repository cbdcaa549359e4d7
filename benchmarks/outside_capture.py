"""Capture the collectives of live 3-rank gloo runs: per rank and collective, the arrival and
the completion (steady clock), for a straggler outside every section and for clean runs.

    python benchmarks/outside_capture.py --out /tmp/gaps --seconds 20

Each run is `fault_injection`'s live job (3 ranks in lock step, 10 matrix products of 96x96 in
a ``forward`` section, an all-reduce and a broadcast per step, the detector on): rank 2 does
``factor - 1`` of that work more, right after its section (``outside``), or nobody does
(clean); idle, and with every core loaded by busy processes. Writes one ``.npz`` per run with,
per rank, ``arrival_ns``, ``done_ns`` (the collectives in issue order, as the training thread
sees them) and ``forward_ns`` (the section's durations), for the statistics to be chosen on
(docs/culprits.md, "A rank slow outside its sections"), and ``waits_rows`` (reports, ranks,
`straggler.analysis.waits.WIDTH`): the row each rank sent with each report (its waits and its
own time per step, `straggler.analysis.own_time`). ``--pack FILE`` gathers the runs'
``waits_rows`` into one small file (tests/data/own_time_reports.npz, replayed by
tests/analysis/test_own_time.py); ``--pack-steps FILE`` their own time per step as each rank
measured it in each report window (``own_counts``, ``own_steps_ms``: the samples the report's
summary is made of; tests/data/own_time_steps.npz, in whole microseconds) and, with
``--pack-outside``, also their own time per step outside the section (``outside_steps_ms``,
recorded since the observer measures it; tests/data/own_time_outside.npz).
``--report-every STEPS``: the ranks call ``Detector.generate_report()`` every STEPS steps and
never ``generate_report_if_interval_elapsed()`` (a job in NVRx's style, whose loop's first
section marks the steps from its first report on). ``--repeats N``: N runs per condition.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from fault_injection import live_job  # noqa: E402

WORK = 10


def _rank(rank: int, world: int, port: int, factor: float, seconds: float, out: mp.Queue,
          every: int = 0) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    from straggler import Detector
    from straggler.reporting.generator import ReportGenerator
    from straggler.timing import collectives

    sent: list[np.ndarray] = []  # this rank's waits row of each report
    windows: list[np.ndarray] = []  # this rank's own time per step of each report window (s)
    outside: list[np.ndarray] = []  # ... and outside its sections
    take = collectives.take_own_time

    def keep_steps():
        got = take()
        windows.append(np.asarray(got.steps_s, dtype=np.float64).copy())
        outside.append(np.asarray(got.outside_s, dtype=np.float64).copy())
        return got

    collectives.take_own_time = keep_steps  # the report cycle's call (report_cycle._waits)
    generate = ReportGenerator.generate_report

    def keep(self, *args, **kwargs):
        if kwargs.get("waits") is not None:
            sent.append(np.asarray(kwargs["waits"], dtype=np.float64).copy())
        return generate(self, *args, **kwargs)

    ReportGenerator.generate_report = keep  # type: ignore[method-assign]
    Detector.initialize(report_time_interval=5.0, comm_timeout_s=60, telemetry=False)
    a = torch.randn(96, 96)
    extra = round(WORK * (factor - 1.0)) if rank == 2 else 0
    sync, stop = torch.zeros(1), torch.zeros(1)
    arrival, done, forward = [], [], []
    clock = time.monotonic_ns
    step = 0
    dist.barrier()
    start = time.monotonic()
    while True:
        t0 = clock()
        with Detector.detection_section("forward", profile_cuda=False):
            b = a
            for _ in range(WORK):
                b = torch.mm(b, a) * 0.01
        forward.append(clock() - t0)
        for _ in range(extra):
            b = torch.mm(b, a) * 0.01
        arrival.append(clock())
        dist.all_reduce(sync)
        done.append(clock())
        step += 1
        if not every:
            Detector.generate_report_if_interval_elapsed()
        elif step % every == 0:  # NVRx's style: the job's own report schedule, no step marks
            Detector.generate_report()
        stop[0] = float(rank == 0 and time.monotonic() - start > seconds)
        arrival.append(clock())
        dist.broadcast(stop, src=0)
        done.append(clock())
        if stop[0] > 0:
            break
    Detector.shutdown()
    dist.destroy_process_group()
    out.put((rank, np.array(arrival), np.array(done), np.array(forward), np.array(sent),
             windows, outside))


def capture(factor: float, busy: int, seconds: float, every: int = 0) -> dict:
    """One run: ``{"arrival_ns": [3, n], "done_ns": [3, n], "forward_ns": [3, m], ...}``."""
    with live_job(busy) as (ctx, load, port):
        out: mp.Queue = ctx.Queue()
        procs = [ctx.Process(target=_rank, args=(r, 3, port, factor, seconds, out, every))
                 for r in range(3)]
        for p in procs:
            p.start()
        got = sorted(out.get(timeout=600) for _ in procs)
        for p in procs:
            p.join()
    n = min(len(g[1]) for g in got)
    m = min(len(g[3]) for g in got)
    reports = min(len(g[5]) for g in got)
    counts = np.array([[len(g[5][i]) for g in got] for i in range(reports)], dtype=np.int64)
    steps = [np.concatenate(g[5][:reports]) if reports else np.empty(0) for g in got]
    outside = [np.concatenate(g[6][:reports]) if reports else np.empty(0) for g in got]
    return {"own_counts": counts,  # (reports, 3): steps of each rank's window
            "own_steps_ms": np.concatenate(steps).astype(np.float32) * np.float32(1e3),
            "outside_steps_ms": np.concatenate(outside).astype(np.float32) * np.float32(1e3),
            "arrival_ns": np.stack([g[1][:n] for g in got]),
            "done_ns": np.stack([g[2][:n] for g in got]),
            "forward_ns": np.stack([g[3][:m] for g in got]),
            "waits_rows": np.stack([g[4][:min(len(x[4]) for x in got)] for g in got], axis=1),
            "factor": factor, "busy": busy, "load": load, "straggler": 2 if factor > 1 else -1}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--factor", type=float, action="append")
    p.add_argument("--busy", type=int, action="append")
    p.add_argument("--pack", type=Path, help="gather the runs in --out into this file")
    p.add_argument("--pack-steps", type=Path,
                   help="gather the runs' own time per step (their first --pack-reports "
                        "report windows) into this file (tests/data/own_time_steps.npz)")
    p.add_argument("--pack-reports", type=int, default=6)
    p.add_argument("--pack-outside", action="store_true",
                   help="with --pack-steps: only the runs that also recorded the own time "
                        "outside the section (tests/data/own_time_outside.npz)")
    p.add_argument("--repeats", type=int, default=1, help="runs per condition")
    p.add_argument("--report-every", type=int, default=0, metavar="STEPS",
                   help="call Detector.generate_report() every STEPS steps instead of "
                        "generate_report_if_interval_elapsed() each step (a job in NVRx's "
                        "style: its loop's first section marks the steps)")
    args = p.parse_args(argv)
    if args.pack or args.pack_steps:
        runs = {}
        for f in sorted(args.out.glob("*.npz")):
            with np.load(f) as run:
                if args.pack_steps and "own_counts" not in run.files:
                    continue  # recorded before the steps were kept
                if args.pack_outside and "outside_steps_ms" not in run.files:
                    continue
                key = base = f"f{float(run['factor']):g}_b{int(run['busy'])}"
                for i in range(2, 100):  # a condition run again: f1.2_b0_2, ...
                    if key not in runs:
                        break
                    key = f"{base}_{i}"
                if args.pack_steps:
                    counts = run["own_counts"][:args.pack_reports]
                    total = run["own_counts"].sum(axis=0)
                    steps = np.split(run["own_steps_ms"], np.cumsum(total)[:-1])
                    kept = counts.sum(axis=0)  # per rank, its first windows' steps
                    flat = np.concatenate([s[:c] for s, c in zip(steps, kept, strict=True)])
                    # Whole microseconds (uint16, at most 65.5 ms): a tenth of the smallest
                    # difference the policy acts on, in a third of the bytes.
                    runs[key] = np.clip(np.round(flat * 1e3), 0, 65535).astype(np.uint16)
                    runs[key + "_counts"] = counts
                    if "outside_steps_ms" in run.files:  # and outside the section
                        out = np.split(run["outside_steps_ms"], np.cumsum(total)[:-1])
                        flat = np.concatenate([s[:c] for s, c in zip(out, kept, strict=True)])
                        runs[key + "_outside"] = np.clip(np.round(flat * 1e3), 0,
                                                         65535).astype(np.uint16)
                else:
                    runs[key] = run["waits_rows"]
                runs[key + "_load"] = np.float32(run["load"])
        target = args.pack_steps or args.pack
        np.savez_compressed(target, **runs)
        print(f"{target}: {sum(1 for k in runs if k.endswith('_load'))} runs")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for busy in args.busy or [0, os.cpu_count() or 2]:
        for factor in args.factor or [1.0, 1.1, 1.2]:
            for _ in range(args.repeats):
                run = capture(factor, busy, args.seconds, args.report_every)
                name = f"f{factor:g}_b{busy}_{int(time.time())}"
                np.savez_compressed(args.out / f"{name}.npz", **run)
                print(f"{name}: {run['arrival_ns'].shape[1]} collectives, load "
                      f"{run['load']:.1f}, own time windows {run['own_counts'][:, 0].tolist()}",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
