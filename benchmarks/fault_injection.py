"""Fault-injection benchmark of the verdict: recall, reports and seconds to confirm, clearing and
false alarms per 1,000 reports, from replayed real traces and from live gloo runs.

    python benchmarks/fault_injection.py                 # both parts (live: several minutes)
    python benchmarks/fault_injection.py --replay-only
    python benchmarks/fault_injection.py --replay-only --interval 5 --rule default --full
    python benchmarks/fault_injection.py --live-only --live-repeats 2

Replay: every trace of tests/data/traces through benchmarks/replay.py (the real report path and
policy) with every injected scenario, at ``--interval`` recorded seconds per report, for each
of `RULES` (``--rule``: the default, the upper quartiles before the tail test or off, the
evidence rule without the fast steps, the earlier k-of-n rule).

Live: 3 spawned ranks on gloo in lock step (a collective each step, like DDP) run the detector
(``report_time_interval=--live-interval``) with one rank's compute section ``factor`` times
longer (more matrix products) from the first step, or none; idle, and with every core loaded
by busy processes. A straggler run stops at its first confirmation (or ``MAX_INTERVALS``
intervals after the onset), a clean one after ``CLEAN_REPORTS`` reports. The 1-minute load
average is printed with the table: the machine is shared. In the ``outside`` scenarios rank 0
also judges every report's own time by other statistics (`LOCATIONS`: the median, as before
the lower-trimmed mean; the fast steps) and with half the sections' time added back
(`SECTIONS_SHARE_PAIRED`) with second policies, so each run gives paired verdicts on the same
windows (``--live-scenario outside:1.1``; ``outside:1.0`` is a clean run with them).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import multiprocessing as mp
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import replay  # noqa: E402

WORK = 10           # matrix products per step on a healthy live rank (x1.1: one more)
MAX_INTERVALS = 8   # a live straggler run gives up this many intervals after the onset
CLEAN_REPORTS = 20  # reports of a clean live run
#: Live scenarios: (where rank 2's extra work goes, factor). "compute": inside its
#: detection_section; "outside": outside every section (only the collective waits see it).
LIVE_SCENARIOS = (("compute", 1.0), ("compute", 1.1), ("compute", 1.2), ("compute", 3.0),
                  ("outside", 1.2))


#: Clean replays start their windows at these fractions of the interval (more clean reports).
CLEAN_PHASES = (0.0, 0.2, 0.4, 0.6, 0.8)


#: The replayed policies: short name -> what it is.
RULES = {
    "default": "evidence rule (default: within-window evidence, fast steps, the tail test)",
    "tails_every_window": "the upper quartiles as before the tail test (every window adds "
                          "its evidence: tail_slow_only=False, tail_full_steps=0)",
    "tails_off": "the upper quartiles off (tail_min_effect=10, the previous default)",
    "previous": "evidence rule without the fast steps (fast_steps=False)",
    "no_minimum": "evidence rule without the minimum span of full windows (min_slow_s=0)",
    "k_of_n": "k_of_n rule",
    "early_run_off": "early windows finish any evidence left since it was last 0 "
                     "(early_confirm_run=False, the previous rule)",
    "sections_all": "every section judged, however short (min_section_share=0, the previous "
                    "rule)",
    "early_from_steps": "early windows read from their steps, finished after 5 s "
                        "(early_from_steps=True, early_finish_min_s=5: the previous rule)",
}


def _rules(names: list[str] | None = None) -> dict:
    """The `PolicyConfig` of each of ``names`` (default: all of `RULES`), by description."""
    from straggler.analysis.policy import PolicyConfig

    configs = {
        "default": PolicyConfig(),
        "tails_every_window": PolicyConfig(tail_slow_only=False, tail_full_steps=0.0),
        "tails_off": PolicyConfig(tail_min_effect=10.0),
        "previous": PolicyConfig(fast_steps=False),
        "no_minimum": PolicyConfig(min_slow_s=0.0),
        "k_of_n": PolicyConfig(rule="k_of_n"),
        "early_run_off": PolicyConfig(early_confirm_run=False),
        "sections_all": PolicyConfig(min_section_share=0.0),
        "early_from_steps": PolicyConfig(early_from_steps=True, early_finish_min_s=5.0),
    }
    return {RULES[n]: configs[n] for n in (names or list(RULES))}


#: Own-time locations a second policy can judge the same live reports by: the row's column of
#: the window's and of its recent part's value, and the standard error factor over the
#: quartiles' sigma. "median": the summary before the lower-trimmed mean; "fast": the 5th
#: percentile (the fast steps) as the location.
LOCATIONS = {"median": (1, 5, 1.25), "fast": (4, 6, 1.25)}


def own_time_before(report: Any, location: str = "median") -> Any:
    """``report`` with its own time per step summarised by another ``location`` (`LOCATIONS`)
    in place of the lower-trimmed mean (`straggler.analysis.own_time.TRIM`); for a paired
    verdict on the same live windows (judge it under `LOCATIONS`' error factor)."""
    import dataclasses

    from straggler.analysis import own_time

    table = report.own_time
    if not isinstance(table, own_time.OwnTimeTable) or not len(table):
        return report
    rows = table.rows.copy()
    whole, recent, _ = LOCATIONS[location]
    rows[:, 7], rows[:, 8] = rows[:, whole], rows[:, recent]
    return dataclasses.replace(report, own_time=own_time.OwnTimeTable(list(table), rows))


def _verdict_before(policy: Any, report: Any, location: str = "median") -> list[int]:
    """The ranks a policy fed `own_time_before` reports confirms after ``report``."""
    from straggler.analysis import own_time
    from straggler.reporting.annotation import apply_policy

    factor, own_time.SE_TRIMMED = own_time.SE_TRIMMED, LOCATIONS[location][2]
    try:
        return sorted(s.rank for s in apply_policy(policy, own_time_before(report, location))
                      .confirmed)
    finally:
        own_time.SE_TRIMMED = factor


SECTIONS_SHARE_PAIRED = 0.5
"""The share of the ranks' median time in sections a second policy judges the same live reports
with (`straggler.analysis.own_time.SECTIONS_SHARE`; the build's: 1.0)."""


def _verdict_share(policy: Any, report: Any, share: float = SECTIONS_SHARE_PAIRED) -> list[int]:
    """The ranks a policy confirms after ``report`` with the own time outside the sections
    judged plus ``share`` of the ranks' median time in sections."""
    from straggler.analysis import own_time
    from straggler.reporting.annotation import apply_policy

    was, own_time.SECTIONS_SHARE = own_time.SECTIONS_SHARE, share
    try:
        return sorted(s.rank for s in apply_policy(policy, report).confirmed)
    finally:
        own_time.SECTIONS_SHARE = was


def _live_rank(rank: int, world: int, port: int, factor: float, interval: float,
               out: mp.Queue, where: str = "compute", onset_s: float = 0.0,
               policy: dict | None = None) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=120))
    from straggler import Detector, Statistic

    Detector.initialize(report_time_interval=interval, comm_timeout_s=60, telemetry=False,
                        policy=policy if policy is not None else True)
    a = torch.randn(96, 96)
    extra = round(WORK * (factor - 1.0)) if rank == 2 else 0
    sync, stop = torch.zeros(1), torch.zeros(1)
    rows: list[dict] = []
    # Outside every section: the verdict the previous own-time summary gives on the same
    # reports (rank 0's, where the policy runs).
    from straggler.analysis.policy import StragglerPolicy, make_policy

    before = make_policy(policy if policy is not None else True) \
        if where == "outside" and rank == 0 else None
    fast = make_policy(policy if policy is not None else True) if before is not None else None
    half = make_policy(policy if policy is not None else True) if before is not None else None
    assert before is None or isinstance(before, StragglerPolicy)
    dist.barrier()
    start = time.monotonic()
    while True:
        now = time.monotonic() - start
        slow = extra if now >= onset_s else 0
        inside, outside = (WORK + slow, 0) if where == "compute" else (WORK, slow)
        with Detector.detection_section("forward", profile_cuda=False):
            b = a
            for _ in range(inside):
                b = torch.mm(b, a) * 0.01
        for _ in range(outside):
            b = torch.mm(b, a) * 0.01
        dist.all_reduce(sync)
        report = Detector.generate_report_if_interval_elapsed()
        if report is not None:
            steps = report.local_section_summaries.get("forward", {})
            num = steps.get(Statistic.NUM, 0)
            rows.append({"t": time.monotonic() - start,
                         "confirmed": sorted(s.rank for s in report.confirmed),
                         "suspects": sorted(s.rank for s in report.suspects),
                         "culprits": sorted(report.culprit_ranks),
                         "steps": int(num) if math.isfinite(num) else 0,
                         "early_next": Detector.core().cycle.next_report_early,
                         "confirmed_before": (None if before is None
                                              else _verdict_before(before, report)),
                         "confirmed_fast": (None if fast is None
                                            else _verdict_before(fast, report, "fast")),
                         "confirmed_half": (None if half is None
                                            else _verdict_share(half, report)),
                         "own_time": {r: (o.steps, round(o.median_ms, 4), round(o.trimmed_ms, 4),
                                          round(o.low_ms, 4), round(o.sections_ms, 4))
                                      for r, o in (report.own_time or {}).items()},
                         "states": {r: dict(st.slow_reports)
                                    for r, st in report.straggler_states.items()}})
        elapsed = time.monotonic() - start
        both = rows and 2 in rows[-1]["confirmed"] and all(
            rows[-1][key] is None or 2 in rows[-1][key]
            for key in ("confirmed_before", "confirmed_half"))
        done = (factor > 1.0 and ((both and elapsed >= onset_s)
                                  or elapsed > onset_s + MAX_INTERVALS * interval)) \
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


@contextlib.contextmanager
def live_job(busy: int) -> Iterator[tuple[Any, float, int]]:
    """What a live run of 3 spawned ranks starts with: the spawn context, with ``busy``
    spinning processes beside the job (stopped on exit), the 1-minute load average once they
    run, and a free port for the ranks' rendezvous."""
    ctx = mp.get_context("spawn")
    spinners = [ctx.Process(target=_spin, daemon=True) for _ in range(busy)]
    for p in spinners:
        p.start()
    try:
        load = os.getloadavg()[0]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        yield ctx, load, port
    finally:
        for p in spinners:  # the processes started here, by handle
            p.terminate()
            p.join()


def live_run(factor: float, busy: int, interval: float, where: str = "compute",
             onset_s: float = 0.0, policy: dict | None = None) -> dict:
    """One live run; its verdict per report and the load it ran under.

    Rank 2 is slowed from ``onset_s`` seconds after the first step. Times to confirm count from
    the onset; a confirmation of rank 2 before it is a false alarm.
    """
    with live_job(busy) as (ctx, load, port):
        out: mp.Queue = ctx.Queue()
        ranks = [ctx.Process(target=_live_rank,
                             args=(r, 3, port, factor, interval, out, where, onset_s, policy))
                 for r in range(3)]
        for p in ranks:
            p.start()
        rows = out.get(timeout=600)
        for p in ranks:
            p.join()
    slowed = factor > 1.0
    first, false = _verdict_counts(rows, "confirmed", slowed, onset_s)
    culprit_reports = sum(1 for r in rows if set(r["culprits"]) - ({2} if slowed else set()))
    # The previous own-time summary's verdict, and the fast steps', on the same reports
    # (outside scenarios).
    first_before, false_before = _verdict_counts(rows, "confirmed_before", slowed, onset_s)
    first_fast, _ = _verdict_counts(rows, "confirmed_fast", slowed, onset_s)
    first_half, false_half = _verdict_counts(rows, "confirmed_half", slowed, onset_s)
    after = [r for r in rows if r["t"] >= onset_s]

    def reports_after_onset(first: int | None) -> int | None:
        return None if first is None else first + 1 - (len(rows) - len(after))

    return {"where": where, "factor": factor, "busy": busy, "load": load, "reports": len(rows),
            "onset_s": onset_s, "to_confirm": reports_after_onset(first),
            "s_to_confirm": None if first is None else rows[first]["t"] - onset_s,
            "false": false, "other_culprit_reports": culprit_reports, "interval": interval,
            "to_confirm_fast": reports_after_onset(first_fast),
            "false_fast": sum(len(set(r["confirmed_fast"] or ()) - {2}) for r in rows),
            "to_confirm_half": reports_after_onset(first_half), "false_half": false_half,
            "to_confirm_before": None if not rows or rows[0]["confirmed_before"] is None
            else reports_after_onset(first_before),
            "false_before": false_before if rows and rows[0]["confirmed_before"] is not None
            else None,
            "early": [False] + [r["early_next"] for r in rows[:-1]],
            "trace": [(round(r["t"], 2), r["steps"], r["suspects"], r["confirmed"], r["states"],
                       r["own_time"]) for r in rows]}


def _verdict_counts(rows: list[dict], key: str, slowed: bool, onset_s: float
                    ) -> tuple[int | None, int]:
    """For one verdict of a live run's reports (``key``: ``"confirmed"``, ...): the index of the
    first report at or after the onset that confirms rank 2 (None: none, or a clean run), and
    the false alarms: ranks newly confirmed that are not the slowed one after its onset (any
    rank when clean)."""
    first = next((i for i, r in enumerate(rows) if slowed and r["t"] >= onset_s
                  and 2 in (r[key] or ())), None)
    false, seen = 0, set[int]()
    for r in rows:
        now = set(r[key] or ())
        false += len(now - seen - ({2} if slowed and r["t"] >= onset_s else set()))
        seen = now
    return first, false


def live_table(runs: list[dict]) -> str:
    lines = ["| live scenario | load | runs | recall (<= 3 reports) | reports to confirm "
             "(median, max) | s to confirm (median, max) | false alarms / 1,000 reports | "
             "reports naming another culprit | load avg (1 min) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(r["where"], r["factor"], r["busy"]) for r in runs})
    for where, factor, busy in keys:
        group = [r for r in runs if r["factor"] == factor and r["busy"] == busy
                 and r["where"] == where]
        reports = sum(r["reports"] for r in group)
        fa = 1000.0 * sum(r["false"] for r in group) / max(reports, 1)
        load = f"{np.mean([r['load'] for r in group]):.1f}"
        name = "clean" if factor == 1.0 else f"{where} x{factor:g} persistent"
        load_name = "loaded" if busy else "idle"
        culprits = sum(r["other_culprit_reports"] for r in group)
        if factor == 1.0:
            lines.append(f"| {name} | {load_name} | {len(group)} | - | - | - | {fa:.1f} "
                         f"({reports} reports) | {culprits} | {load} |")
            continue
        hits = [r for r in group if r["to_confirm"] is not None]
        within = sum(1 for r in hits if r["to_confirm"] <= replay.WITHIN)
        rtc = (f"{np.median([r['to_confirm'] for r in hits]):.0f}, "
               f"{max(r['to_confirm'] for r in hits)}") if hits else "never"
        stc = (f"{np.median([r['s_to_confirm'] for r in hits]):.1f}, "
               f"{max(r['s_to_confirm'] for r in hits):.1f}") if hits else "-"
        lines.append(f"| {name} | {load_name} | {len(group)} | {within / len(group):.2f} | "
                     f"{rtc} | {stc} | {fa:.1f} | {culprits} | {load} |")
    return "\n".join(lines)


def paired_table(runs: list[dict]) -> str:
    """Per run of an outside scenario: this build's verdict and the previous own-time
    summary's (`own_time_before`) on the same reports."""
    lines = ["| scenario | load | load avg (1 min) | reports | reports to confirm (s) | "
             "before: reports to confirm | half the sections' time: reports to confirm | "
             "false alarms (before, half) |",
             "|---|---|---:|---:|---|---|---|---|"]
    for r in runs:
        name = "clean" if r["factor"] == 1.0 else f"{r['where']} x{r['factor']:g}"
        now = "-" if r["factor"] == 1.0 else (
            "never" if r["to_confirm"] is None
            else f"{r['to_confirm']} ({r['s_to_confirm']:.1f} s)")
        was, half = ("-" if r["factor"] == 1.0 else "never" if r[key] is None else str(r[key])
                     for key in ("to_confirm_before", "to_confirm_half"))
        lines.append(f"| {name} | {'loaded' if r['busy'] else 'idle'} | {r['load']:.1f} | "
                     f"{r['reports']} | {now} | {was} | {half} | {r['false']} "
                     f"({r['false_before']}, {r['false_half']}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from straggler.analysis.policy import PolicyConfig, StragglerPolicy

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--interval", type=float, action="append",
                   help="replay: recorded seconds per report (default 5)")
    p.add_argument("--live-interval", type=float, default=5.0,
                   help="live: report_time_interval in s (default 5: windows of several "
                        "hundred steps; at 1 s they hold a few dozen)")
    p.add_argument("--live-repeats", type=int, default=1)
    p.add_argument("--full", action="store_true",
                   help="replay: also the table per kind, factor, pattern and load")
    p.add_argument("--replay-only", action="store_true")
    p.add_argument("--rule", action="append", choices=list(RULES),
                   help="replay: the policies to replay (default: all)")
    p.add_argument("--live-only", action="store_true")
    p.add_argument("--live-scenario", action="append", metavar="WHERE:FACTOR",
                   help="live: run these scenarios (e.g. outside:1.1, compute:1.2, clean) in "
                        "place of the default ones")
    args = p.parse_args(argv)
    rules = _rules(args.rule)
    if not args.live_only:
        found = replay.traces()
        for t in found:
            print(f"trace {t.name}: {t.world} ranks, {t.steps} steps in {t.meta['seconds']:.0f} "
                  f"s, busy processes {t.meta['busy_processes']}/{t.meta['cpu_count']} cores, "
                  f"load {t.meta['loadavg_1m_before']:.1f} -> {t.meta['loadavg_1m_after']:.1f}")
        runs_of = [v for t in found for v in replay.variants(t)]
        print(f"replayed as {len(runs_of)} runs: each trace and each 3-rank subset of a 4-rank "
              "trace; injected scenarios with the report windows at 2 phases, clean runs at "
              f"{len(CLEAN_PHASES)}")
        for interval in args.interval or [5.0, 3.0]:
            for name, config in rules.items():
                def make(config: PolicyConfig = config,
                         interval: float = interval) -> StragglerPolicy:
                    return StragglerPolicy(config, interval_s=interval)  # as the detector's
                phases = (0.0, interval / 2)
                outcomes = replay.replay_all(runs_of, interval, make, direct=True, phases=phases,
                                             clean_phases=[f * interval for f in CLEAN_PHASES])
                print(f"\nreplay, {interval:g} s per report, {name}:")
                print(replay.summary(outcomes))
                if args.full:
                    print(replay.table(outcomes))
                sys.stdout.flush()
    if not args.replay_only:
        busy = os.cpu_count() or 2
        runs = []
        scenarios = LIVE_SCENARIOS if not args.live_scenario else [
            ("compute", 1.0) if s == "clean" else (s.split(":")[0], float(s.split(":")[1]))
            for s in args.live_scenario]
        for _ in range(args.live_repeats):
            for b in (0, busy):
                for where, f in scenarios:
                    runs.append(live_run(f, b, args.live_interval, where))
                    print(f"live run: {runs[-1]}", flush=True)
        print(f"\nlive, 3 ranks, report_time_interval={args.live_interval:g} s:")
        print(live_table(runs))
        paired = [r for r in runs if r.get("false_before") is not None]
        if paired:
            print("\noutside every section, each run: reports to confirm (s), false alarms; "
                  "the previous own-time summary (the median) on the same reports:")
            print(paired_table(paired))
    return 0


if __name__ == "__main__":
    sys.exit(main())
