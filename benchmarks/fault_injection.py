"""Fault-injection benchmark of the verdict: recall, reports and seconds to confirm, clearing and
false alarms per 1,000 reports, from replayed real traces and from live gloo runs.

    python benchmarks/fault_injection.py                 # both parts (live: several minutes)
    python benchmarks/fault_injection.py --replay-only
    python benchmarks/fault_injection.py --live-only --live-repeats 2

Replay: every trace of tests/data/traces through benchmarks/replay.py (the real report path and
policy) with every injected scenario, at ``--interval`` recorded seconds per report, for the
evidence rule (the default) and the earlier k-of-n rule (``PolicyConfig(rule="k_of_n")``).

Live: 3 spawned ranks on gloo in lock step (a collective each step, like DDP) run the detector
(``report_time_interval=--live-interval``) with one rank's compute section ``factor`` times
longer (more matrix products) from the first step, or none; idle, and with every core loaded
by busy processes. A straggler run stops at its first confirmation (or after ``MAX_S``), a
clean one after ``CLEAN_REPORTS`` reports. The 1-minute load average is printed with the table:
the machine is shared.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import socket
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import replay  # noqa: E402

WORK = 8            # matrix products per step on a healthy live rank
MAX_S = 40.0        # a live straggler run gives up after this long
CLEAN_REPORTS = 20  # reports of a clean live run
LIVE_FACTORS = (1.0, 1.1, 1.2, 3.0)


def _live_rank(rank: int, world: int, port: int, factor: float, interval: float,
               out: mp.Queue) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    from straggler import Detector

    Detector.initialize(report_time_interval=interval, comm_timeout_s=60, telemetry=False)
    a = torch.randn(96, 96)
    reps = round(WORK * factor) if rank == 2 else WORK
    sync, stop = torch.zeros(1), torch.zeros(1)
    rows: list[tuple[float, list[int]]] = []
    dist.barrier()
    start = time.monotonic()
    while True:
        with Detector.detection_section("forward", profile_cuda=False):
            b = a
            for _ in range(reps):
                b = torch.mm(b, a) * 0.01
        dist.all_reduce(sync)
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:
            rows.append((time.monotonic() - start, sorted(s.rank for s in report.confirmed)))
        elapsed = time.monotonic() - start
        done = (factor > 1.0 and rows and 2 in rows[-1][1]) or elapsed > MAX_S \
            or (factor == 1.0 and len(rows) >= CLEAN_REPORTS)
        stop[0] = float(rank == 0 and bool(done))
        dist.broadcast(stop, src=0)
        if stop[0] > 0:
            break
    Detector.shutdown()
    dist.destroy_process_group()
    if rank == 0:
        out.put(rows)


def _spin() -> None:
    while True:
        pass


def live_run(factor: float, busy: int, interval: float) -> dict:
    """One live run; its verdict per report and the load it ran under."""
    ctx = mp.get_context("spawn")
    spinners = [ctx.Process(target=_spin, daemon=True) for _ in range(busy)]
    for p in spinners:
        p.start()
    load = os.getloadavg()[0]
    out: mp.Queue = ctx.Queue()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ranks = [ctx.Process(target=_live_rank, args=(r, 3, port, factor, interval, out))
             for r in range(3)]
    for p in ranks:
        p.start()
    rows = out.get(timeout=600)
    for p in ranks:
        p.join()
    for p in spinners:  # the processes started here, by handle
        p.terminate()
        p.join()
    first = next((i for i, (_, c) in enumerate(rows) if 2 in c), None)
    false = sum(len(set(c) - {2}) for _, c in rows)
    return {"factor": factor, "busy": busy, "load": load, "reports": len(rows),
            "to_confirm": None if first is None else first + 1,
            "s_to_confirm": None if first is None else rows[first][0], "false": false}


def live_table(runs: list[dict]) -> str:
    lines = ["| live scenario | load | runs | recall | reports to confirm | s to confirm | "
             "false alarms / 1,000 reports | load avg (1 min) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(r["factor"], r["busy"]) for r in runs})
    for factor, busy in keys:
        group = [r for r in runs if r["factor"] == factor and r["busy"] == busy]
        reports = sum(r["reports"] for r in group)
        fa = 1000.0 * sum(r["false"] for r in group) / max(reports, 1)
        load = f"{np.mean([r['load'] for r in group]):.1f}"
        name = "clean" if factor == 1.0 else f"compute x{factor:g} persistent"
        where = "loaded" if busy else "idle"
        if factor == 1.0:
            lines.append(f"| {name} | {where} | {len(group)} | - | - | - | {fa:.1f} "
                         f"({reports} reports) | {load} |")
            continue
        hits = [r for r in group if r["to_confirm"] is not None]
        rtc = f"{np.median([r['to_confirm'] for r in hits]):.0f}" if hits else "never"
        stc = f"{np.median([r['s_to_confirm'] for r in hits]):.1f}" if hits else "-"
        lines.append(f"| {name} | {where} | {len(group)} | {len(hits) / len(group):.2f} | "
                     f"{rtc} | {stc} | {fa:.1f} | {load} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from straggler.analysis.policy import PolicyConfig, StragglerPolicy

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--interval", type=float, action="append",
                   help="replay: recorded seconds per report (default 5)")
    p.add_argument("--live-interval", type=float, default=1.0,
                   help="live: report_time_interval in s (default 1)")
    p.add_argument("--live-repeats", type=int, default=1)
    p.add_argument("--full", action="store_true",
                   help="replay: also the table per kind, factor, pattern and load")
    p.add_argument("--replay-only", action="store_true")
    p.add_argument("--live-only", action="store_true")
    args = p.parse_args(argv)
    if not args.live_only:
        found = replay.traces()
        for t in found:
            print(f"trace {t.name}: {t.world} ranks, {t.steps} steps in {t.meta['seconds']:.0f} "
                  f"s, busy processes {t.meta['busy_processes']}/{t.meta['cpu_count']} cores, "
                  f"load {t.meta['loadavg_1m_before']:.1f} -> {t.meta['loadavg_1m_after']:.1f}")
        cache: dict = {}
        for interval in args.interval or [5.0]:
            for rule in ("evidence", "k_of_n"):
                def make(rule: str = rule) -> StragglerPolicy:
                    return StragglerPolicy(PolicyConfig(rule=rule))
                outcomes = replay.replay_all(found, interval, make, cache=cache)
                print(f"\nreplay, {interval:g} s per report, rule {rule!r}:")
                print(replay.summary(outcomes))
                if args.full:
                    print(replay.table(outcomes))
                sys.stdout.flush()
    if not args.replay_only:
        busy = os.cpu_count() or 2
        runs = []
        for _ in range(args.live_repeats):
            for b in (0, busy):
                for f in LIVE_FACTORS:
                    runs.append(live_run(f, b, args.live_interval))
                    print(f"live run: {runs[-1]}", flush=True)
        print(f"\nlive, 3 ranks, report_time_interval={args.live_interval:g} s:")
        print(live_table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
