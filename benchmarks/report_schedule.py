"""Reports on time whatever the step time does, and time to a verdict with early reports.

Real multi-process runs (gloo, CPU, this machine): each rank sleeps its step, then one training
all_reduce keeps the ranks in lockstep, as data-parallel training does. Two tables:

1. Report gaps when the step time jumps (100x slower, 100x faster, a long first step), with the
   report deadline (straggler/dist/deadline.py) and without it (the iteration count alone), in
   the same run: the largest gap between reports in units of ``report_time_interval``.
2. Seconds to a confirmed straggler: the live runs of benchmarks/fault_injection.py (3 ranks in
   lock step, rank 2's compute section 10 % / 20 % slower from the first step or from mid-run),
   idle and with every core busy, with early reports after a report that has suspects.

    .venv/bin/python benchmarks/report_schedule.py --only gaps       # about 3 minutes
    .venv/bin/python benchmarks/report_schedule.py --only verdict    # about 15 minutes

Replayed (tests/data/traces, no process): ``--only phases`` times the verdict by the onset's
phase in its window for several policies in one run (``--policy 'NAME:SETTING=VALUE,...'``,
repeated; about 3 minutes per policy and factor), ``--only bound`` the most any verdict could
reach there (an oracle that knows the onset; about 1 minute), ``--only clean`` the false
confirmations of the clean runs with early reports and each one's windows (seconds per
policy and interval):

    .venv/bin/python benchmarks/report_schedule.py --only phases --factor 1.1 \
        --policy 'default:' --policy 'span 1:early_confirm_span=1.0'
    .venv/bin/python benchmarks/report_schedule.py --only bound
    .venv/bin/python benchmarks/report_schedule.py --only clean --verdict-interval 3
    .venv/bin/python benchmarks/report_schedule.py --only null    # an online null: minutes
    .venv/bin/python benchmarks/report_schedule.py --only pairing   # per-step pairs: seconds
    .venv/bin/python benchmarks/report_schedule.py --only gap --policy default: \
        --policy 'threshold 5:evidence_threshold=5.0'   # 10 % within 3 at 3 s: 4 min a policy
"""

from __future__ import annotations

import argparse
import ast
import datetime
import itertools
import math
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


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


def _live_verdicts(interval: float, repeats: int) -> list[dict]:
    """Live runs (benchmarks/fault_injection.py's: 3 gloo ranks in lock step, rank 2's compute
    section slower): 10 % and 20 %, idle and with every core busy, from the first step and
    starting mid-run (3.3 and 3.8 intervals in: two phases of the report windows)."""
    import fault_injection

    busy = os.cpu_count() or 2
    runs = []
    for _ in range(repeats):
        for b in (0, busy):
            for factor in (1.1, 1.2):
                for onset in (0.0, 3.3 * interval, 3.8 * interval):
                    r = fault_injection.live_run(factor, b, interval, onset_s=onset)
                    r["load_after"] = os.getloadavg()[0]
                    print(f"live run: {r}", flush=True)
                    runs.append(r)
    return runs


#: Onset phases of the live sweep (fractions of the interval, from 3 intervals into the run).
LIVE_PHASES = (0.1, 0.3, 0.5, 0.7, 0.9)


def _onset_phase(run: dict) -> float | None:
    """Where a live run's onset fell in its report window (0: at its start, 1: at its end),
    from the report times; None when that window was an early one."""
    times = [0.0] + [t for t, *_ in run["trace"]]
    early = [False] + run["early"]
    onset = run["onset_s"]
    for i in range(1, len(times)):
        if times[i] >= onset:
            if early[i - 1] if i - 1 < len(early) else False:
                return None
            return (onset - times[i - 1]) / (times[i] - times[i - 1])
    return None


def _live_phases(interval: float, repeats: int, factor: float = 1.1) -> str:
    """Live runs (3 gloo ranks, rank 2's compute section ``factor`` times slower from
    3 + `LIVE_PHASES` intervals), idle and with every core busy, before
    (``early_confirm_run=False``) and after (the default), interleaved; one row per run: the
    onset's phase in its window (from the report times) and the intervals to confirm."""
    import fault_injection

    busy = os.cpu_count() or 2
    lines = ["| policy | load | onset (intervals) | phase in its window | intervals to confirm "
             "| reports after the onset | early windows (steps) | load avg (1 min) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for _ in range(repeats):
        for b in (0, busy):
            for phase in LIVE_PHASES:
                for name, policy in (("previous (early_confirm_run=False)",
                                      {"early_confirm_run": False}), ("default", None)):
                    r = fault_injection.live_run(factor, b, interval,
                                                 onset_s=(3.0 + phase) * interval, policy=policy)
                    at = _onset_phase(r)
                    took = "never" if r["s_to_confirm"] is None \
                        else f"{r['s_to_confirm'] / interval:.2f}"
                    early = [steps for (_, steps, *_rest), e in zip(r["trace"], r["early"],
                                                                     strict=True) if e]
                    lines.append(f"| {name} | {'loaded' if b else 'idle'} | {3 + phase:.1f} | "
                                 f"{'early window' if at is None else f'{at:.2f}'} | {took} | "
                                 f"{r['to_confirm']} | {statistics.median(early) if early else '-'}"
                                 f" | {r['load']:.1f}-{os.getloadavg()[0]:.1f} |")
                    print(lines[-1], flush=True)
                    print(f"  reports (s, steps, suspects, confirmed): "
                          f"{[row[:4] for row in r['trace']]}", flush=True)
    return "\n".join(lines)


def _verdict_table(runs: list[dict], interval: float) -> str:
    lines = ["| rank 2 slower by | load | slowed from | runs | confirmed within 1.5 intervals | "
             "s to confirm (median, max) | x interval (median, max) | reports after the onset "
             "(median, max) | early windows (steps, median) | load avg (1 min) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(r["factor"], r["busy"], r["onset_s"] > 0) for r in runs})
    for factor, busy, mid in keys:
        group = [r for r in runs if (r["factor"], r["busy"], r["onset_s"] > 0)
                 == (factor, busy, mid)]
        secs = [r["s_to_confirm"] if r["s_to_confirm"] is not None else math.inf
                for r in group]
        hits = [r for r in group if r["s_to_confirm"] is not None]
        within = sum(1 for x in secs if x <= 1.5 * interval)
        early = [steps for r in group for (_, steps, *_rest), early in
                 zip(r["trace"], r["early"], strict=True) if early]

        def med_max(values: list[float], fmt: str = ".1f", runs: int = len(group)) -> str:
            if not values:
                return "never"
            text = f"{statistics.median(values):{fmt}}, {max(values):{fmt}}"
            return text + (f" ({runs - len(values)} never)" if len(values) < runs else "")

        loads = [r["load"] for r in group] + [r["load_after"] for r in group]
        lines.append(
            f"| {round((factor - 1) * 100)} % | {'loaded' if busy else 'idle'} | "
            f"{'mid-run' if mid else 'the first step'} | {len(group)} | {within}/{len(group)} | "
            f"{med_max([r['s_to_confirm'] for r in hits])} | "
            f"{med_max([r['s_to_confirm'] / interval for r in hits], '.2f')} | "
            f"{med_max([float(r['to_confirm']) for r in hits], '.0f')} | "
            f"{statistics.median(early) if early else '-'} | "
            f"{min(loads):.1f}-{max(loads):.1f} |")
    return "\n".join(lines)


def _replay_verdicts(interval: float) -> str:
    """Time to a verdict on the recorded traces (tests/data/traces), with and without early
    reports: rank 2 slowed 10 % / 20 % (compute, data, host stall) from the start or mid-run
    (3, 3.25, 3.5 and 3.75 intervals in), and the clean runs' false confirmations."""
    import numpy as np
    import replay

    runs = [v for t in replay.traces() for v in replay.variants(t)]
    lines = ["| early reports | slowed by | from | runs | within 1.5 intervals | intervals to "
             "confirm (median, 90th pct) | never | clean: false alarms (reports) |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for early in (False, True):
        false = reports = 0
        for trace in runs:
            for phase in (0.0, 0.5 * interval):
                clean = replay.schedule_verdicts(trace, trace.times_ms, interval, early, phase)
                reports += len(clean)
                false += len(set().union(*(c for _, c, _ in clean)))
        rows = []
        for factor in (1.1, 1.2):
            for mid in (False, True):
                took = []
                for trace in runs:
                    for kind in replay.KINDS:
                        for onset in ((3.0, 3.25, 3.5, 3.75) if mid else (0.0,)):
                            onset_s = onset * interval
                            bounds = [(int(np.searchsorted(trace.end_s, onset_s)),
                                       trace.steps)]
                            inj = replay.Injection(min(2, trace.world - 1), factor, kind,
                                                   onset=0)
                            slowed = replay.inject(trace, bounds, inj)
                            got = replay.schedule_verdicts(trace, slowed, interval, early)
                            hit = next((t for t, c, _ in got if inj.rank in c
                                        and t >= onset_s), None)
                            took.append(math.inf if hit is None else (hit - onset_s) / interval)
                v = np.array(took)
                rows.append(f"| {'on' if early else 'off'} | {round((factor - 1) * 100)} % | "
                            f"{'mid-run' if mid else 'the start'} | {v.size} | "
                            f"{np.mean(v <= 1.5):.2f} | {np.median(v):.2f}, "
                            f"{np.quantile(v, 0.9):.2f} | {np.mean(~np.isfinite(v)):.2f} | "
                            f"{false} ({reports}) |")
                print(rows[-1], flush=True)
        lines += rows
    return "\n".join(lines)


#: Onsets of the phase sweep: these many seconds of the recorded runs (100 s) in, each plus
#: every phase; at 5 s per report, 6 and 10 intervals.
SWEEP_ONSETS_S = (30.0, 50.0)


def sweep_onsets(interval: float) -> tuple[float, ...]:
    """The phase sweep's onsets in intervals (`SWEEP_ONSETS_S` at ``interval`` s)."""
    return tuple(s / interval for s in SWEEP_ONSETS_S)


#: Phases of the sweep's onsets in their report window (fractions of the interval).
SWEEP_PHASES = tuple(i / 10 for i in range(10))


def _sweep_policies(specs: list[str] | None = None) -> dict[str, Any]:
    """The policies the phase sweep compares, by name: ``specs`` (``--policy``) as
    ``"name:setting=value,..."`` (`PolicyConfig` settings; ``"name:"`` the defaults); without
    them, before (early windows alone confirm, ``early_confirm_span=0``) and after (the
    default)."""
    from straggler.analysis.policy import PolicyConfig

    if not specs:
        specs = ["early windows alone confirm (early_confirm_span=0):early_confirm_span=0",
                 "default:"]
    out: dict[str, Any] = {}
    for spec in specs:
        name, sep, settings = spec.rpartition(":")
        if not sep or not name:
            raise SystemExit(f"`--policy {spec!r}` must be NAME:SETTING=VALUE,... (or NAME:)")
        try:  # checked now: a bad setting fails before the sweep
            kwargs = {key.strip(): ast.literal_eval(value.strip()) for key, _, value in
                      (item.partition("=") for item in filter(None, settings.split(",")))}
            cadence = {key: kwargs.pop(key) for key in CADENCE if key in kwargs}
            config = PolicyConfig(**kwargs)
        except (SyntaxError, TypeError, ValueError) as exc:
            raise SystemExit(f"`--policy {spec!r}`: {exc}") from None
        out[name] = SweepPolicy(config, cadence)
    return out


class SweepPolicy:
    """One policy of the phase sweep: called, a fresh `StragglerPolicy` of ``config``;
    ``cadence``: the early cadence's constants its runs use (`CADENCE`)."""

    def __init__(self, config: Any, cadence: dict[str, Any]) -> None:
        self.config, self.cadence = config, cadence

    def __call__(self) -> Any:
        from straggler.analysis.policy import StragglerPolicy

        return StragglerPolicy(self.config)


#: The early cadence's constants (straggler/report_cycle.py) a ``--policy`` may set for its
#: runs, next to `PolicyConfig` settings (e.g. ``'min 40:MIN_EARLY_STEPS=40'``).
CADENCE = ("EARLY_FRACTION", "MAX_EARLY_REPORTS", "MIN_EARLY_STEPS")


def _with_cadence(cadence: dict[str, Any], fn: Any, *args: Any) -> Any:
    """``fn(*args)`` with straggler.report_cycle's early cadence set to ``cadence`` (the
    replay reads it at every report: `replay.schedule_verdicts`), restored after."""
    import straggler.report_cycle as cycle

    saved = {key: getattr(cycle, key) for key in cadence}
    try:
        for key, value in cadence.items():
            setattr(cycle, key, value)
        return fn(*args)
    finally:
        for key, value in saved.items():
            setattr(cycle, key, value)


def _replay_phases(interval: float, factors: tuple[float, ...] = (1.1, 1.2),
                   policies: list[str] | None = None) -> str:
    """Time to a verdict for a straggler that starts mid-run, by the onset's phase in its
    report window, on the recorded traces with early reports: rank 2 slowed 10 % / 20 %
    (compute, data, host stall) from `sweep_onsets` + ``SWEEP_PHASES`` intervals; before and
    after in the same run. The phase is where the onset falls in the report window that holds
    it (early reports before the onset move the windows; an onset inside an early window is
    its own row). Clean runs: false confirmations and early reports (the cost of suspects)."""
    import numpy as np
    import replay

    runs = [v for t in replay.traces() for v in replay.variants(t)]
    lines = ["| policy | slowed by | onset phase in its window | runs | within 1.5 intervals | "
             "intervals to confirm (median, max) | never |", "|---|---|---|---:|---:|---:|---:|"]
    clean_lines = ["| policy | clean reports | early reports (share) | false alarms |",
                   "|---|---:|---:|---:|"]
    summary_lines = ["| policy | slowed by | within 1.5 intervals, onset in a full window (runs) "
                     "| in an early window (runs) | clean: false alarms in reports |",
                     "|---|---|---:|---:|---:|"]
    trace_lines = ["| policy | slowed by | trace | steps per window (median) | within 1.5 "
                   "intervals | intervals to confirm (median) |", "|---|---|---|---:|---:|---:|"]
    for name, make in _sweep_policies(policies).items():
        def schedule(trace: Any, times_ms: Any, phase_s: float, make: Any = make) -> Any:
            return _with_cadence(make.cadence, replay.schedule_verdicts, trace, times_ms,
                                 interval, True, phase_s, make)

        reports = early = false = 0
        for trace in runs:
            for phase in CLEAN_PHASES:
                clean = schedule(trace, trace.times_ms, phase * interval)
                reports += len(clean)
                early += sum(e for _, _, e in clean)
                false += len(set().union(*(c for _, c, _ in clean)))
        clean_lines.append(f"| {name} | {reports} | {early} ({early / max(reports, 1):.1%}) | "
                           f"{false} |")
        print(clean_lines[-1], flush=True)
        for factor in factors:
            by_bin: dict[str, list[float]] = {}
            by_trace: dict[str, list[float]] = {}
            for trace in runs:
                for kind in replay.KINDS:
                    for base in sweep_onsets(interval):
                        for phase in SWEEP_PHASES:
                            onset_s = (base + phase) * interval
                            bounds = [(int(np.searchsorted(trace.end_s, onset_s)), trace.steps)]
                            inj = replay.Injection(min(2, trace.world - 1), factor, kind,
                                                   onset=0)
                            got = schedule(trace, replay.inject(trace, bounds, inj), 0.0)
                            ends = [0.0] + [t for t, _, _ in got]
                            at = int(np.searchsorted(ends, onset_s))  # the onset's report
                            if at >= len(ends):
                                continue
                            if got[at - 1][2]:
                                key = "in an early window"
                            else:
                                where = (onset_s - ends[at - 1]) / (ends[at] - ends[at - 1])
                                key = f"{min(int(where * 10), 9) / 10:.1f}-" \
                                      f"{min(int(where * 10), 9) / 10 + 0.1:.1f}"
                            hit = next((t for t, c, _ in got if inj.rank in c
                                        and t >= onset_s), None)
                            took = math.inf if hit is None else (hit - onset_s) / interval
                            by_bin.setdefault(key, []).append(took)
                            by_trace.setdefault(trace.name, []).append(took)
            full = [t for k, v in by_bin.items() if k != "in an early window" for t in v]
            in_early = by_bin.get("in an early window", [])
            summary_lines.append(
                f"| {name} | {round((factor - 1) * 100)} % | "
                f"{np.mean(np.array(full) <= 1.5):.2f} ({len(full)}) | "
                f"{np.mean(np.array(in_early) <= 1.5) if in_early else math.nan:.2f} "
                f"({len(in_early)}) | {false} in {reports} |")
            for key in sorted(by_bin):
                v = np.array(by_bin[key])
                fin = v[np.isfinite(v)]
                med = f"{np.median(fin):.2f}, {fin.max():.2f}" if fin.size else "-"
                lines.append(f"| {name} | {round((factor - 1) * 100)} % | {key} | {v.size} | "
                             f"{np.mean(v <= 1.5):.2f} | {med} | {int(np.sum(~np.isfinite(v)))} |")
                print(lines[-1], flush=True)
            for trace in runs:
                v = np.array(by_trace[trace.name])
                steps = np.median([b - a for a, b in replay.window_bounds(trace, interval)])
                trace_lines.append(f"| {name} | {round((factor - 1) * 100)} % | {trace.name} | "
                                   f"{steps:.0f} | {np.mean(v <= 1.5):.2f} | "
                                   f"{np.median(v):.2f} |")
    return "\n\n".join("\n".join(t) for t in (summary_lines, lines, clean_lines, trace_lines))


#: Window phases of the clean runs of the sweeps (fractions of the interval).
CLEAN_PHASES = (0.0, 0.2, 0.4, 0.6, 0.8)


def _clean_confirmations(intervals: tuple[float, ...], policies: list[str] | None = None
                         ) -> str:
    """False confirmations on the clean recorded runs with early reports (the cadence of
    `replay.schedule_verdicts`), windows at `CLEAN_PHASES`, per policy and interval; and each
    one's chain: the windows from the last one that left the rank's evidence on that metric at
    0 to the confirming one (and the window after), with the rank's median and fast steps
    (5th percentile; an upper-quartile metric: its upper quartile) against its peers' median
    and the evidence after each window. A rank confirmed in a run counts once."""
    import numpy as np
    import replay

    def behind(times: Any, a: int, b: int, rank: int, col: int, q: float) -> str:
        v = np.percentile(times[:, a:b, col], q, axis=1)
        return f"{math.expm1(math.log(v[rank] / np.median(np.delete(v, rank)))):+.1%}"

    runs = [v for t in replay.traces() for v in replay.variants(t)]
    summary = ["| policy | interval (s) | clean reports | early reports | false confirmations "
               "| per 1,000 reports |", "|---|---:|---:|---:|---:|---:|"]
    chains = ["| policy | interval (s) | run (window phase) | rank, metric | windows: end (s), "
              "steps, full/early, median / fast steps behind the peers, evidence after |",
              "|---|---:|---|---|---|"]
    for name, make in _sweep_policies(policies or ["default:"]).items():
        for interval in intervals:
            reports = early = false = 0
            for trace in runs:
                for phase in CLEAN_PHASES:
                    seen: list[tuple[int, int, bool, Any, dict[str, Any]]] = []

                    def observe(policy: Any, decision: Any, a: int, b: int, short: bool,
                                seen: list = seen) -> None:
                        # The evidence per metric: the policy's own state (a diagnostic).
                        evidence = {m: (ms.evidence.copy(), ms.confirmed_by.copy())
                                    for m, ms in policy._metrics.items()}
                        seen.append((a, b, short, decision, evidence))

                    got = _with_cadence(make.cadence, replay.schedule_verdicts, trace,
                                        trace.times_ms, interval, True, phase * interval, make,
                                        observe)
                    reports += len(got)
                    early += sum(e for _, _, e in got)
                    false += len(set().union(*(c for _, c, _ in got)))
                    chains += _chains(trace, seen, behind, f"| {name} | {interval:g} | "
                                      f"{trace.name} ({phase:g}) |")
            summary.append(f"| {name} | {interval:g} | {reports} | {early} | {false} | "
                           f"{1000 * false / max(reports, 1):.1f} |")
            print(summary[-1], flush=True)
    return "\n".join(summary) + "\n\n" + "\n".join(chains)


def _chains(trace: Any, seen: list, behind: Any, prefix: str) -> list[str]:
    """The rows of `_clean_confirmations`' chains for one run's reports ``seen``."""
    rows = []
    for i, (*_, decision, evidence) in enumerate(seen):
        for rank in sorted(decision.newly_confirmed):
            for metric, (_, by) in evidence.items():
                before = seen[i - 1][4].get(metric) if i else None
                if not by[rank] or (before is not None and before[1][rank]):
                    continue
                j = i
                while j > 0 and metric in seen[j - 1][4] and seen[j - 1][4][metric][0][rank] > 0:
                    j -= 1
                col = trace.sections.index(metric.split(":")[1])
                q = 75.0 if metric.endswith(":p75") else 50.0
                cells = []
                for a2, b2, short, _, ev2 in seen[max(j - 1, 0):i + 2]:
                    cells.append(f"{trace.end_s[b2 - 1]:.1f}, {b2 - a2}, "
                                 f"{'early' if short else 'full'}, "
                                 f"{behind(trace.times_ms, a2, b2, rank, col, q)} / "
                                 f"{behind(trace.times_ms, a2, b2, rank, col, 5.0)}, "
                                 f"{ev2[metric][0][rank] if metric in ev2 else math.nan:.1f}")
                rows.append(f"{prefix} {rank}, `{metric}` | {'; '.join(cells)} |")
    return rows


def _fixed_recall(make: Any, interval: float, factor: float = 1.1, within: int = 3,
                  misses: list[str] | None = None) -> tuple[dict[str, list[bool]], int]:
    """A persistent straggler (rank 2, ``factor``, compute, data and stall) on the recorded
    runs in fixed windows of ``interval`` s at 2 phases (`fault_injection.py`'s runs): whether
    each run confirmed it within ``within`` reports, by trace, and the healthy ranks confirmed
    in them. ``misses``: gets a row per miss with its best metric's evidence after each of the
    ``within`` windows from the onset (the policy's state: a diagnostic)."""
    import numpy as np
    import replay
    from straggler.analysis.policy import StragglerPolicy

    by: dict[str, list[bool]] = {}
    false = 0
    for trace in [v for t in replay.traces() for v in replay.variants(t)]:
        cols = [trace.sections.index(s) for s in replay.SCORED]
        for phase in (0.0, interval / 2):
            bounds = replay.window_bounds(trace, interval, phase)
            onset = replay.onset_of(len(bounds))
            for kind in replay.KINDS:
                inj = replay.Injection(min(2, trace.world - 1), factor, kind, "persistent",
                                       onset)
                times = replay.inject(trace, bounds, inj)
                policy = make()
                if isinstance(policy, StragglerPolicy) and policy.interval_s is None:
                    policy.interval_s = interval
                seen: set[int] = set()
                hit, cells = False, []
                for i, (a, b) in enumerate(bounds):
                    decision = policy.update(np.arange(trace.world),
                                             **replay.window_observation(times, a, b, cols),
                                             early=False)
                    false += len(set(decision.confirmed) - seen - {inj.rank})
                    seen = set(decision.confirmed)
                    if onset <= i < onset + within:
                        hit = hit or inj.rank in decision.confirmed
                        metric, ms = max(policy._metrics.items(),
                                         key=lambda kv: kv[1].evidence[inj.rank])
                        cells.append(f"{b - a}: {ms.evidence[inj.rank]:.1f} "
                                     f"({metric.split(':', 1)[-1]})")
                by.setdefault(trace.name, []).append(hit)
                if not hit and misses is not None:
                    misses.append(f"| {trace.name} | {phase:g} | {kind} | {'; '.join(cells)} |")
    return by, false


def _gap(intervals: tuple[float, ...], policies: list[str] | None = None) -> str:
    """Where the recall within 3 reports goes at short intervals: per policy (`--policy`),
    a persistent 10 % straggler confirmed within 3 reports in fixed windows (per trace), and
    the false confirmations of the clean runs in fixed windows (6 phases) and with early
    reports (`CLEAN_PHASES`), at each of ``intervals``; then the default's misses at the
    first interval, each with its best metric's evidence after each window."""
    import numpy as np
    import replay

    runs = [v for t in replay.traces() for v in replay.variants(t)]
    head = " | ".join(f"10 % within 3 at {i:g} s | clean, fixed windows, {i:g} s | clean, "
                      f"early reports, {i:g} s" for i in intervals)
    lines = [f"| policy | {head} | healthy ranks confirmed in the injected runs |",
             "|---|" + "---:|" * (3 * len(intervals) + 1)]
    per_trace = ["| policy | interval (s) | " + " | ".join(t.name for t in runs) + " |",
                 "|---|---:|" + "---:|" * len(runs)]
    misses: list[str] = []
    for n, (name, make) in enumerate(_sweep_policies(policies or ["default:"]).items()):
        cells, injected = [], 0
        for k, interval in enumerate(intervals):
            by, false = _fixed_recall(make, interval,
                                      misses=misses if n == 0 and k == 0 else None)
            injected += false
            hits = [h for v in by.values() for h in v]
            cells.append(f"{np.mean(hits):.2f} ({sum(hits)} of {len(hits)})")
            per_trace.append(f"| {name} | {interval:g} | "
                             + " | ".join(f"{np.mean(by[t.name]):.2f}" for t in runs) + " |")
            reports = confirmed = 0
            for trace in runs:
                for phase in (*CLEAN_PHASES, 0.5):
                    bounds = replay.window_bounds(trace, interval, phase * interval)
                    got, _ = replay.direct_verdicts(
                        trace, trace.times_ms, bounds, replay.with_interval(make, interval))
                    reports += len(got)
                    confirmed += len(set().union(*got))
            cells.append(f"{confirmed} in {reports}")
            reports = confirmed = 0
            for trace in runs:
                for phase in CLEAN_PHASES:
                    got2 = _with_cadence(make.cadence, replay.schedule_verdicts, trace,
                                         trace.times_ms, interval, True, phase * interval, make)
                    reports += len(got2)
                    confirmed += len(set().union(*(c for _, c, _ in got2)))
            cells.append(f"{confirmed} in {reports}")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {injected} |")
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n\n" + "\n".join(per_trace) + (
        f"\n\nthe default's misses at {intervals[0]:g} s (run, window phase (s), kind; each "
        "window from the onset: its steps, the best metric's evidence after it (of 6)):\n\n"
        "| run | phase | kind | windows |\n|---|---:|---|---|\n" + "\n".join(misses))


def _span_statistics(times: Any, bounds: list[tuple[int, int]], cols: list[int]) -> Any:
    """``(windows, ranks, sections)``: each rank's fast-steps statistic per window, the smaller
    of its median's and its 5th percentile's log ratio to the median of its peers' (the
    policy's `min(median, 5th percentile)`)."""
    import numpy as np

    out = []
    for a, b in bounds:
        w = np.log(times[:, a:b][:, :, cols])
        med, p5 = np.median(w, axis=1), np.percentile(w, 5, axis=1)
        out.append([np.minimum(med[r] - np.median(np.delete(med, r, axis=0), axis=0),
                               p5[r] - np.median(np.delete(p5, r, axis=0), axis=0))
                    for r in range(w.shape[0])])
    return np.array(out)


def _null_verdicts(stat: Any, span: int, margin: float, warm: int) -> dict[int, int]:
    """The window at which the empirical null first names each rank: a rank is slow when the
    sum of its statistic over the last ``span`` windows exceeds, in some section, the median
    of every rank's such sums in the windows before by ``margin`` robust standard deviations
    (1.4826 MAD), once ``warm`` windows of sums are in."""
    import numpy as np

    sums = np.array([stat[t - span + 1:t + 1].sum(axis=0)
                     for t in range(span - 1, stat.shape[0])])
    first: dict[int, int] = {}
    for t in range(warm, sums.shape[0]):
        past = sums[:t].reshape(-1, sums.shape[2])
        centre = np.median(past, axis=0)
        bar = centre + margin * 1.4826 * np.median(np.abs(past - centre), axis=0)
        for rank in np.flatnonzero((sums[t] > bar).any(axis=1)):
            first.setdefault(int(rank), t + span - 1)
    return first


def _empirical_null(intervals: tuple[float, ...], margins: tuple[float, ...] = (4.0, 5.0, 6.0),
                    span: int = 3, warms: tuple[int, ...] = (4, 10)) -> str:
    """An empirical null learned online, measured on the recorded traces with fixed windows
    (`_null_verdicts`): per run, section and margin, false confirmations of the clean runs
    (windows at `CLEAN_PHASES`) and recall of a persistent 10 % straggler (rank 2's compute,
    data or a host stall from `replay.onset_of`, windows at 2 phases) within 3 reports, alone
    and with the default policy's verdicts (either naming it); the null speaks after ``warm``
    windows of sums (at 5 s the onset comes after 4-5)."""
    import replay
    from straggler.analysis.policy import StragglerPolicy

    runs = [v for t in replay.traces() for v in replay.variants(t)]
    lines = ["| interval (s) | warm-up (windows) | margin (robust sd) | clean: false "
             "confirmations (reports) | 10 % within 3 reports: the null | the policy | either | "
             "injected runs: other ranks named by the null |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for interval in intervals:
        make = replay.with_interval(StragglerPolicy, interval)
        cases = []  # (statistic, onset) of every injected run, and the policy's verdict
        clean = []
        for trace in runs:
            cols = [trace.sections.index(s) for s in replay.SCORED]
            for phase in CLEAN_PHASES:
                bounds = replay.window_bounds(trace, interval, phase * interval)
                clean.append(_span_statistics(trace.times_ms, bounds, cols))
            for phase in (0.0, interval / 2):
                bounds = replay.window_bounds(trace, interval, phase)
                onset = replay.onset_of(len(bounds))
                for kind in replay.KINDS:
                    inj = replay.Injection(2, 1.1, kind, "persistent", onset)
                    slowed = replay.inject(trace, bounds, inj)
                    got = replay.direct_verdicts(trace, slowed, bounds, make)[0]
                    hit = next((i for i, c in enumerate(got) if 2 in c), None)
                    cases.append((_span_statistics(slowed, bounds, cols), onset,
                                  hit is not None and onset <= hit <= onset + 2))
        reports = sum(c.shape[0] for c in clean)
        for warm, margin in itertools.product(warms, margins):
            false = sum(len(_null_verdicts(c, span, margin, warm)) for c in clean)
            null = either = others = 0
            for stat, onset, policy in cases:
                named = _null_verdicts(stat, span, margin, warm)
                found = onset <= named.get(2, -1) <= onset + 2
                null += found
                either += found or policy
                others += len(set(named) - {2})
            n = len(cases)
            lines.append(f"| {interval:g} | {warm} | {margin:g} | {false} ({reports}) | "
                         f"{null / n:.2f} | "
                         f"{sum(c[2] for c in cases) / n:.2f} | {either / n:.2f} | {others} |")
            print(lines[-1], flush=True)
    return "\n".join(lines)


def _oracle_bound(interval: float, factors: tuple[float, ...] = (1.1, 1.2),
                  spans: tuple[float, ...] = (1.0, 1.5)) -> str:
    """The most any verdict could reach on the recorded traces within ``span`` intervals of
    the onset at no false alarm, for the onsets of the phase sweep (`sweep_onsets` +
    `SWEEP_PHASES`, 3 kinds, rank 2 ``factor`` slower): an oracle that knows the onset pools
    every step from it to ``span`` intervals later and reads, per section, the smaller of the
    median of the rank's per-step log ratio to its peers' per-step median and its 5th
    percentile's log ratio to theirs (the fast steps, as the policy does). Its threshold is the
    largest value any healthy rank of the clean trace reaches over any stretch of ``span``
    intervals (every 0.1 interval), per trace and section: the best threshold with 0 false
    alarms, chosen on the data itself (so an upper bound). A run counts when some section is
    over its threshold."""
    import numpy as np
    import replay

    def stat(times: Any, cols: list[int], rank: int, a: int, b: int) -> Any:
        x = np.log(times[:, a:b][:, :, cols])  # ranks, steps, sections
        med = np.median(x[rank] - np.median(np.delete(x, rank, axis=0), axis=0), axis=0)
        p5 = np.percentile(x, 5, axis=1)
        return np.minimum(med, p5[rank] - np.median(np.delete(p5, rank, axis=0), axis=0))

    lines = ["| within (intervals of the onset) | slowed by | trace | healthy ranks' worst stretch "
             "(data, forward, optimizer) | runs over it |", "|---|---|---|---|---:|"]
    totals: dict[tuple[float, float], list[int]] = {}
    for trace in (v for t in replay.traces() for v in replay.variants(t)):
        cols = [trace.sections.index(s) for s in replay.SCORED]
        for span in spans:
            thr = np.full(len(cols), -np.inf)
            for start in np.arange(0.0, trace.end_s[-1] - span * interval, 0.1 * interval):
                a, b = np.searchsorted(trace.end_s, (start, start + span * interval))
                if b - a >= 5:
                    for r in range(trace.world):
                        thr = np.maximum(thr, stat(trace.times_ms, cols, r, int(a), int(b)))
            for factor in factors:
                hit = n = 0
                for kind in replay.KINDS:
                    for onset in (base + phase for base in sweep_onsets(interval)
                                  for phase in SWEEP_PHASES):
                        a, b = (int(i) for i in np.searchsorted(
                            trace.end_s, (onset * interval, (onset + span) * interval)))
                        if b >= trace.steps:
                            continue
                        inj = replay.Injection(min(2, trace.world - 1), factor, kind, onset=0)
                        slowed = replay.inject(trace, [(a, trace.steps)], inj)
                        n += 1
                        hit += bool((stat(slowed, cols, inj.rank, a, b) > thr).any())
                got = totals.setdefault((span, factor), [0, 0])
                got[0] += hit
                got[1] += n
                worst = ", ".join(f"{math.expm1(v):+.1%}" for v in thr)
                lines.append(f"| {span:g} | {round((factor - 1) * 100)} % | {trace.name} | "
                             f"{worst} | {hit}/{n} ({hit / max(n, 1):.2f}) |")
    for (span, factor), (hit, n) in sorted(totals.items()):
        lines.append(f"| {span:g} | {round((factor - 1) * 100)} % | all | - | "
                     f"**{hit}/{n} ({hit / max(n, 1):.2f})** |")
    return "\n".join(lines)


def _pairing(intervals: tuple[float, ...] = (5.0, 0.75)) -> str:
    """Whether pairing each rank's steps with its peers' same iterations would sharpen the
    evidence: per recorded trace and section, the mean correlation of per-step log times
    between ranks (the shared noise a per-iteration ratio would cancel), and the spread (robust
    sd over every healthy rank's windows) of three measures of a rank's slowness against its
    peers: the window medians' log ratio, the policy's `min(median, 5th percentile)` ratio
    (`straggler.analysis.persistence.fast_step_ratio`), and the median of the per-step log
    ratio to the peers' median of the same iteration (what pairing would read). A smaller
    spread at the same effect is a larger z for a straggler."""
    import numpy as np
    import replay

    def rsd(v: Any) -> float:
        return float(1.4826 * np.median(np.abs(v - np.median(v))))

    lines = ["| trace | window (s) | steps per window (median) | per-step correlation between "
             "ranks | window medians | medians and fast steps (the policy) | per-step pairs |",
             "|---|---:|---:|---|---|---|---|"]
    for trace in (v for t in replay.traces() for v in replay.variants(t)):
        x = np.log(trace.times_ms[:, :, [trace.sections.index(s) for s in replay.SCORED]])
        tri = np.triu_indices(trace.world, 1)
        corr = [float(np.corrcoef(x[:, :, i])[tri].mean()) for i in range(x.shape[2])]
        for interval in intervals:
            bounds = replay.window_bounds(trace, interval)
            medians, fast, paired = [], [], []
            for a, b in bounds:
                w = x[:, a:b]
                med, p5 = np.median(w, axis=1), np.percentile(w, 5, axis=1)
                for r in range(trace.world):
                    d = med[r] - np.median(np.delete(med, r, axis=0), axis=0)
                    f = p5[r] - np.median(np.delete(p5, r, axis=0), axis=0)
                    medians.append(d)
                    fast.append(np.minimum(d, f))
                    paired.append(np.median(w[r] - np.median(np.delete(w, r, axis=0), axis=0),
                                            axis=0))

            def spread(rows: list[Any]) -> str:
                v = np.array(rows)
                return ", ".join(f"{rsd(v[:, i]):.1%}" for i in range(v.shape[1]))

            lines.append(f"| {trace.name} | {interval:g} | "
                         f"{np.median([b - a for a, b in bounds]):.0f} | "
                         f"{', '.join(f'{c:.2f}' for c in corr)} | {spread(medians)} | "
                         f"{spread(fast)} | {spread(paired)} |")
    return "\n".join(lines)


def _gaps_table(interval: float) -> None:
    """The report gaps when the step time jumps, with and without the deadline (printed)."""
    scenarios = [
        ("steady 2 ms steps", (0.002, 0.002, 0.002), 3.0, 6.0),
        ("100x slower at 3 s (0.5 -> 50 ms)", (0.0005, 0.0005, 0.05), 3.0, 8.0),
        ("100x faster at 3 s (50 -> 0.5 ms)", (0.05, 0.05, 0.0005), 3.0, 8.0),
        ("first step 5 s, then 2 ms", (5.0, 0.002, 0.002), 3.0, 6.0),
    ]
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
                  f"{max(gaps) / interval:.2f} | {r['triggered']} |", flush=True)
    print("\n(largest gap includes the stretch from the last report to the end of the run)\n")


#: ``--only`` choices that replay the recorded traces (no process, no report interval).
REPLAYED = ("replay", "phases", "bound", "pairing", "clean", "null", "gap")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=1.0, help="report_time_interval (s)")
    parser.add_argument("--only", choices=("gaps", "verdict", "replay", "phases", "live-phases",
                                           "bound", "pairing", "clean", "null", "gap"),
                        help="one table only")
    parser.add_argument("--verdict-interval", type=float, action="append",
                        help="report_time_interval of the time-to-verdict runs and the replays "
                        "(s, default 5; --only clean: repeat it, default 3, 5, 7.5 and 10)")
    parser.add_argument("--policy", action="append", metavar="NAME:SETTING=VALUE,...",
                        help="--only phases, clean and gap: a policy to compare (repeat it; "
                        "PolicyConfig settings, e.g. 'early 1.0:early_confirm_span=1.0', and "
                        "the early cadence's MIN_EARLY_STEPS, MAX_EARLY_REPORTS, EARLY_FRACTION; "
                        "'default:' the defaults); without it, before and after "
                        "early_confirm_span")
    parser.add_argument("--factor", type=float, action="append",
                        help="--only phases: slowdowns to inject (repeat it; default 1.1 and 1.2)")
    parser.add_argument("--span", type=float, action="append",
                        help="--only bound: intervals after the onset the oracle may read "
                        "(repeat it; default 1 and 1.5)")
    parser.add_argument("--repeats", type=int, default=2,
                        help="time-to-verdict runs per row and phase (default 2)")
    args = parser.parse_args()
    interval = args.interval
    intervals = tuple(args.verdict_interval or ())
    args.verdict_interval = intervals[0] if intervals else 5.0
    load = os.getloadavg()[0]
    if args.only in REPLAYED:
        print(f"replayed traces (tests/data/traces), no process; load average {load:.1f} on "
              f"{os.cpu_count()} CPUs\n")
    elif args.only in ("verdict", "live-phases"):
        print(f"report_time_interval={args.verdict_interval:g} s, 3 ranks, gloo, load average "
              f"{load:.1f} on {os.cpu_count()} CPUs\n")
    else:
        print(f"report_time_interval={interval:g} s, 2 ranks (report gaps) and "
              f"{args.verdict_interval:g} s, 3 ranks (time to a verdict), gloo, load average "
              f"{load:.1f} on {os.cpu_count()} CPUs\n")
    if args.only in (None, "gaps"):
        _gaps_table(interval)
    if args.only in (None, "replay"):
        print(f"time to a verdict on the recorded traces: {args.verdict_interval:g} s of the "
              "recorded runs per report\n", flush=True)
        print(_replay_verdicts(args.verdict_interval))
    if args.only in (None, "phases"):
        print(f"time to a verdict by the onset's phase, recorded traces, "
              f"{args.verdict_interval:g} s per report, early reports on\n", flush=True)
        print(_replay_phases(args.verdict_interval, tuple(args.factor or (1.1, 1.2)),
                             args.policy))
    if args.only == "bound":
        print(f"the oracle's bound on the recorded traces, {args.verdict_interval:g} s per "
              "report\n", flush=True)
        print(_oracle_bound(args.verdict_interval, tuple(args.factor or (1.1, 1.2)),
                            tuple(args.span or (1.0, 1.5))))
    if args.only == "clean":
        print("false confirmations on the clean recorded runs, early reports on\n", flush=True)
        print(_clean_confirmations(intervals or (3.0, 5.0, 7.5, 10.0), args.policy))
    if args.only == "gap":
        print("where 10 % within 3 reports goes, fixed windows (clean: fixed windows and early "
              "reports)\n", flush=True)
        print(_gap(intervals or (3.0, 5.0), args.policy))
    if args.only == "null":
        print("an empirical null of 3-window sums learned online, fixed windows\n", flush=True)
        print(_empirical_null(intervals or (3.0, 5.0)))
    if args.only == "pairing":
        print("pairing steps by iteration, recorded traces (sections: data, forward, "
              "optimizer)\n", flush=True)
        print(_pairing((args.verdict_interval, 0.15 * args.verdict_interval)))
    if args.only == "live-phases":
        print(f"live, report_time_interval={args.verdict_interval:g} s, 3 ranks, rank 2 10 % "
              "slower from mid-run\n", flush=True)
        print(_live_phases(args.verdict_interval, args.repeats))
    if args.only not in (None, "verdict"):
        return
    vinterval = args.verdict_interval
    print(f"time to a verdict: report_time_interval={vinterval:g} s, 3 ranks, gloo; seconds "
          "from the onset until rank 0's report confirms rank 2 (never: not within 8 "
          "intervals)\n", flush=True)
    runs = _live_verdicts(vinterval, args.repeats)
    print(_verdict_table(runs, vinterval))


if __name__ == "__main__":
    main()
