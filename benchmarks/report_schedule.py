"""Reports on time whatever the step time does, and time to a verdict with early reports.

Real multi-process runs (gloo, CPU, this machine): each rank sleeps its step, then one training
all_reduce keeps the ranks in lockstep, as data-parallel training does. Two tables:

1. Report gaps when the step time jumps (100x slower, 100x faster, a long first step), with the
   report deadline (straggler/dist/deadline.py) and without it (the iteration count alone), in
   the same run: the largest gap between reports in units of ``report_time_interval``.
2. Seconds to a confirmed straggler (rank 2 slower by 10 % / 20 % in every step, from the
   start), with early reports after a report that has suspects and without them.

    .venv/bin/python benchmarks/report_schedule.py            # about 3 minutes
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from typing import Any


def _rank(rank: int, world: int, store: str, fn: Any, args: tuple, out: Any) -> None:
    os.environ.update({"OMP_NUM_THREADS": "1"})
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    try:
        out.put((rank, fn(rank, *args)))
    finally:
        dist.destroy_process_group()


def _run(fn: Any, world: int, *args: Any) -> list[Any]:
    ctx = mp.get_context("spawn")
    tmp = tempfile.mkdtemp(prefix="straggler-sched-")
    out = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, world, os.path.join(tmp, "store"), fn, args, out))
             for r in range(world)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(30)
    shutil.rmtree(tmp, ignore_errors=True)
    return [results[r] for r in range(world)]


def _stop(rank: int, start: float | None, limit_s: float) -> bool:
    """The step's training all_reduce, carrying rank 0's "stop now" (every rank ends together)."""
    import torch
    import torch.distributed as dist

    late = rank == 0 and start is not None and time.monotonic() - start >= limit_s
    t = torch.tensor([1.0 if late else 0.0])
    dist.all_reduce(t)
    return t.item() > 0


def _jump(rank: int, interval_s: float, steps: tuple[float, float, float], switch_s: float,
          run_s: float, deadline: bool) -> dict:
    from straggler import Detector

    Detector.initialize(report_time_interval=interval_s, telemetry=False, comm_timeout_s=60)
    core = Detector.core()
    if not deadline:  # the iteration count alone (the baseline)
        core.cycle.close_deadline()
        core.cycle.deadline = None
    first, before, after = steps
    step_s, start, times = first, None, []
    while True:
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(step_s)
        if _stop(rank, start, run_s):  # the training all_reduce: rank 0 says when to end
            break
        if start is None:
            start = time.monotonic()  # the clock starts after the first step
        step_s = before if time.monotonic() - start < switch_s else after
        Detector.generate_report_if_interval_elapsed()
        if Detector.is_interval_elapsed():
            times.append(time.monotonic() - start)
    triggered = core.cycle.deadline.triggered if core.cycle.deadline is not None else 0
    Detector.shutdown()
    return {"times": times, "triggered": triggered}


def _verdict(rank: int, interval_s: float, slowdown: float, limit_s: float, early: bool) -> dict:
    import straggler.report_cycle as cycle_module
    from straggler import Detector

    if not early:
        cycle_module.MAX_EARLY_REPORTS = 0
    Detector.initialize(report_time_interval=interval_s, telemetry=False, comm_timeout_s=60)
    step_s = 0.01 * (slowdown if rank == 2 else 1.0)
    start, reports, confirmed_at = None, 0, None
    while True:
        with Detector.detection_section("step", profile_cuda=False):
            time.sleep(step_s)
        if _stop(rank, start, limit_s if confirmed_at is None else 0.0):
            break
        if start is None:
            start = time.monotonic()
        Detector.generate_report_if_interval_elapsed()
        decision = Detector.last_decision()
        if Detector.is_interval_elapsed():
            reports += 1
            if decision is not None and 2 in decision.stragglers and confirmed_at is None:
                confirmed_at = (time.monotonic() - start, reports)
    Detector.shutdown()
    return {"confirmed_at": confirmed_at, "reports": reports}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=1.0, help="report_time_interval (s)")
    parser.add_argument("--only", choices=("gaps", "verdict"), help="one table only")
    args = parser.parse_args()
    interval = args.interval
    load = os.getloadavg()[0]
    print(f"report_time_interval={interval:g} s, 2 ranks (table 1) and 3 ranks (table 2), gloo, "
          f"load average {load:.1f} on {os.cpu_count()} CPUs\n")
    scenarios = [
        ("steady 2 ms steps", (0.002, 0.002, 0.002), 3.0, 6.0),
        ("100x slower at 3 s (0.5 -> 50 ms)", (0.0005, 0.0005, 0.05), 3.0, 8.0),
        ("100x faster at 3 s (50 -> 0.5 ms)", (0.05, 0.05, 0.0005), 3.0, 8.0),
        ("first step 5 s, then 2 ms", (5.0, 0.002, 0.002), 3.0, 6.0),
    ]
    if args.only == "verdict":
        scenarios = []
    print("| scenario | deadline | reports | first report (s after step 1) | largest gap "
          "(x interval) | reports by the deadline |")
    print("|---|---|---|---|---|---|")
    for name, steps, switch, run in scenarios:
        for deadline in (False, True):
            r = _run(_jump, 2, interval, steps, switch, run, deadline)[0]
            times = r["times"]
            gaps = [b - a for a, b in zip([0.0, *times], [*times, run], strict=True)]
            first = f"{times[0]:.2f}" if times else "none"
            print(f"| {name} | {'on' if deadline else 'off'} | {len(times)} | {first} | "
                  f"{max(gaps) / interval:.2f} | {r['triggered']} |")
    print("\n(largest gap includes the stretch from the last report to the end of the run)\n")
    if args.only == "gaps":
        return
    vinterval = 2.0 * interval
    print(f"report_time_interval={vinterval:g} s; seconds (reports) from the end of the first "
          "step until rank 0's decision names rank 2; 'never' within 5x the interval\n")
    print("| rank 2 slower by | early reports | confirmed after | x interval |")
    print("|---|---|---|---|")
    for slowdown in (1.2, 1.1):
        for early in (False, True):
            r = _run(_verdict, 3, vinterval, slowdown, 5 * vinterval, early)[0]
            at = r["confirmed_at"]
            text = "never" if at is None else f"{at[0]:.1f} s ({at[1]} reports)"
            ratio = "-" if at is None else f"{at[0] / vinterval:.2f}"
            print(f"| {round((slowdown - 1) * 100)} % | {'on' if early else 'off'} | {text} | "
                  f"{ratio} |")


if __name__ == "__main__":
    main()
