"""Scale: rank-0 report time, bytes per rank per report, and memory after a long run.

Rank-0 time is measured on the real `ReportGenerator` (and the default policy) fed through the
simulator's `SimComm`, which hands rank 0 exactly what the collectives would deliver from 1k,
4k or 16k ranks; the time the simulator spends computing the other ranks' contributions is
subtracted, and the collectives' network time is not part of it (it depends on the fabric).
Bytes are the payload one rank contributes to each collective of a report. Memory is measured
with ``tracemalloc`` (Python and numpy allocations): a single rank's `ReportGenerator` after a
long run, a `Detector` after many section entries, and rank 0's policy state at 16k ranks.

    python benchmarks/scale.py           # 1k/4k/16k ranks x 100/1,000 timers
    python benchmarks/scale.py --quick   # 1k ranks only, fewer reports
    python benchmarks/scale.py --policy-baseline main   # the policy's rank-0 time, A/B
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import simulator
from _baseline import baseline_tree, run_in_tree, short_rev


def report_times(world: int, timers: int, reports: int, policy: bool, waits: bool = False
                 ) -> tuple[float, float, float, dict, dict, float]:
    """Rank-0 ms of steady-state reports (median, best), first-report ms, steady and first
    bytes per rank, and the median ms spent in the policy (NaN without one). ``waits``: every
    rank also sends its collective waits and rank 0 attributes them (docs/culprits.md)."""
    import straggler.reporting.generator as reporting

    sim = simulator.SimWorld(world, policy=policy, waits=waits)
    sc = simulator.scenario("slow20")
    times, first_ms, first_bytes, steady_bytes = [], 0.0, {}, {}
    policy_ms: list[float] = []
    apply = reporting.apply_policy

    def timed_apply(pol, rep):  # the policy's share of the rank-0 time
        t0 = time.perf_counter_ns()
        out = apply(pol, rep)
        policy_ms.append((time.perf_counter_ns() - t0) / 1e6)
        return out

    reporting.apply_policy = timed_apply
    for sample in simulator.generate(sc, world, reports, seed=0, gpu_timers=timers):
        before = dict(sim.comm.bytes_sent)
        sim.report(sample)
        sent = {k: v - before.get(k, 0) for k, v in sim.comm.bytes_sent.items()
                if v - before.get(k, 0)}
        if sample.report == 0:
            first_ms, first_bytes = sim.last_rank0_ns / 1e6, sent
        else:
            times.append(sim.last_rank0_ns / 1e6)
            steady_bytes = sent
    reporting.apply_policy = apply
    share = statistics.median(policy_ms[1:]) if len(policy_ms) > 1 else float("nan")
    return statistics.median(times), min(times), first_ms, steady_bytes, first_bytes, share


def memory_report_generator(timers: int, sections: int, reports: int) -> int:
    """Bytes held by one rank's ReportGenerator (individual baselines, registry) after a run."""
    from straggler.analysis.statistics import Statistic
    from straggler.reporting.generator import ReportGenerator

    rng = np.random.default_rng(0)
    names = simulator.gpu_timer_names(timers)
    secs = [f"section{i}" for i in range(sections)]
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    gen = ReportGenerator("all", True, node_name="node0", policy=True)
    for _ in range(reports):
        med = rng.uniform(0.5, 1.5, timers)
        gpu = {n: {Statistic.MED: m, Statistic.AVG: m, Statistic.NUM: 100.0}
               for n, m in zip(names, med, strict=True)}
        sec = {n: {Statistic.MED: 10.0 * rng.uniform(0.9, 1.1), Statistic.NUM: 100.0}
               for n in secs}
        report = gen.generate_report(sec, gpu)
        del report, gpu, sec
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del gen
    return held


def memory_detector(sections: int, entries: int, report_every: int, warm: bool = True) -> int:
    """Bytes held by a host-only Detector after ``entries`` section entries and its reports.

    ``warm``: a first short Detector run (initialize, a section, a report, shutdown) goes
    before the measurement, so that what a process pays once (modules imported on first use,
    numpy's and torch's first-call caches, of which numpy's percentile for the section
    quartiles ~0.5 MiB; benchmarks/init_cost.py measures them) is not counted as the
    detector's state; ``warm=False`` counts it.
    """
    from straggler import Detector

    if warm:
        Detector.initialize(report_time_interval=3600, node_name="node0")
        with Detector.detection_section("warm-up", profile_cuda=False):
            pass
        Detector.generate_report()
        Detector.shutdown()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    Detector.initialize(report_time_interval=3600, node_name="node0")
    names = [f"section{i}" for i in range(sections)]
    for i in range(entries):
        with Detector.detection_section(names[i % sections], profile_cuda=False):
            pass
        if (i + 1) % report_every == 0:
            Detector.generate_report()
    held = tracemalloc.get_traced_memory()[0] - base
    Detector.shutdown()
    tracemalloc.stop()
    return held


def memory_policy(world: int, reports: int) -> int:
    """Bytes of rank 0's policy state for ``world`` ranks and three metrics."""
    from straggler.analysis.policy import StragglerPolicy

    rng = np.random.default_rng(0)
    ranks = np.arange(world)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    policy = StragglerPolicy()
    for _ in range(reports):
        times = {m: 10 * (1 + 0.01 * rng.standard_normal(world))
                 for m in ("gpu", "section:step", "section:data")}
        decision = policy.update(ranks, times)
        del decision, times
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return held


def waits_pairs(world: int, reports: int) -> tuple[list[float], list[float], list[float], int]:
    """Rank-0 CPU ms of the same reports without and with collective waits, interleaved (the
    order alternates), the attribution's CPU ms alone, and the bytes per rank (with).

    CPU time of rank 0's thread, not wall time: on a shared machine the time a process waits
    for a core (load 4-13 on the project's 2 cores) would swamp a difference of a few ms."""
    import straggler.reporting.generator as reporting

    attribute_ms: list[float] = []
    attribute = reporting.attribute_waits

    def timed_attribute(*args, **kwargs):
        t0 = time.thread_time_ns()
        out = attribute(*args, **kwargs)
        attribute_ms.append((time.thread_time_ns() - t0) / 1e6)
        return out

    sims = {w: simulator.SimWorld(world, policy=True, waits=w) for w in (False, True)}
    samples = simulator.generate(simulator.scenario("slow20"), world, reports + 1, seed=0,
                                 gpu_timers=100)
    times: dict[bool, list[float]] = {False: [], True: []}
    steady = 0
    reporting.attribute_waits = timed_attribute
    # Python's cyclic collector runs when allocations add up, so it fell on one report of a
    # pair more than the other (paired ratios of 0.45 and 3.6 at 16k ranks): it runs between
    # the reports instead, untimed, and never inside one.
    gc.disable()
    try:
        for i, sample in enumerate(samples):
            for w in (False, True) if i % 2 else (True, False):
                before = sum(sims[w].comm.bytes_sent.values())
                gc.collect()
                sims[w].report(sample)
                if i:  # the first report registers the names
                    times[w].append(sims[w].last_rank0_cpu_ns / 1e6)
                if w:
                    steady = sum(sims[w].comm.bytes_sent.values()) - before
    finally:
        reporting.attribute_waits = attribute
        gc.enable()
    return times[False], times[True], attribute_ms[1:], steady


def waits_table(worlds: Sequence[int], reports: int) -> None:
    """Rank-0 report time without and with collective waits: paired reports of one run."""
    print(f"Rank-0 CPU ms (its thread's CPU time) of a report with the default policy and "
          f"100 GPU timers, without and with collective waits (each rank sends its packed "
          f"waits of 3 groups; rank 0 attributes them), {reports} steady-state reports of "
          f"each, interleaved in one process (the same window without, then with, the order "
          f"alternating; Python's garbage collector runs between reports, untimed); the ratio "
          f"is the median of the paired ratios, with their 25th-75th percentiles. Load "
          f"average {os.getloadavg()[0]:.1f} at the start.\n")
    print("| ranks | without waits (median / best ms) | with waits (median / best ms) | "
          "ratio: median of pairs (p25-p75) | ratio of the bests | attribution ms (median) | "
          "bytes per rank (with) | load |")
    print("|---|---|---|---|---|---|---|---|")
    for world in worlds:
        off, on, attr, steady = waits_pairs(world, reports)
        pairs = np.array(on) / np.array(off)
        p25, p50, p75 = np.percentile(pairs, (25, 50, 75))
        print(f"| {world:,} | {statistics.median(off):.1f} / {min(off):.1f} | "
              f"{statistics.median(on):.1f} / {min(on):.1f} | {p50:.2f} ({p25:.2f}-{p75:.2f}) | "
              f"{min(on) / min(off):.2f} | {statistics.median(attr):.1f} | {steady:,} | "
              f"{os.getloadavg()[0]:.1f} |", flush=True)


_POLICY_CHILD = r"""
import gc, json, statistics, sys, time
sys.path.insert(0, sys.argv[3])  # this tree's simulator: both trees get the same reports
import simulator
import straggler.reporting.generator as reporting
world, reports = int(sys.argv[1]), int(sys.argv[2])
apply, cpu_ms = reporting.apply_policy, []

def timed(policy, report):
    gc.collect()
    t0 = time.thread_time_ns()
    out = apply(policy, report)
    cpu_ms.append((time.thread_time_ns() - t0) / 1e6)
    return out

reporting.apply_policy = timed
sim = simulator.SimWorld(world, policy=True, waits=True)
for sample in simulator.generate(simulator.scenario("slow20"), world, reports + 1, seed=0,
                                 gpu_timers=100):
    sim.report(sample)
print(json.dumps(statistics.median(cpu_ms[1:])))  # the first report learns the names
"""


def policy_ab(baseline: str, worlds: Sequence[int], reports: int, rounds: int) -> None:
    """The policy's rank-0 CPU ms per report in this tree and in ``baseline``, on the same
    simulated reports (this tree's simulator), each in a fresh interpreter, alternating."""
    here = str(Path(__file__).resolve().parent)
    print(f"The policy's rank-0 CPU time per report (`apply_policy`, its thread's CPU time, "
          f"the default policy with collective waits, 2 sections, 100 GPU timers, one rank "
          f"20 % slow): median of {reports} steady-state reports per interpreter, this tree "
          f"and {short_rev(baseline)} alternating over {rounds} rounds, the same reports "
          f"(this tree's simulator); a row: the median over the rounds. Load average "
          f"{os.getloadavg()[0]:.1f} at the start.\n")
    print(f"| ranks | {short_rev(baseline)} ms | this tree ms | ratio | load |")
    print("|---|---|---|---|---|")
    with baseline_tree(baseline) as base:
        for world in worlds:
            ms: dict[str, list[float]] = {"base": [], "this": []}
            for i in range(rounds):
                for name in ("base", "this") if i % 2 == 0 else ("this", "base"):
                    tree = base if name == "base" else str(Path(here).parent)
                    ms[name].append(run_in_tree(tree, _POLICY_CHILD,
                                                [str(world), str(reports), here]))
            b, t = statistics.median(ms["base"]), statistics.median(ms["this"])
            print(f"| {world:,} | {b:.1f} | {t:.1f} | {t / b:.2f} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Report time, bytes and memory at scale")
    parser.add_argument("--quick", action="store_true", help="1k ranks only, few reports")
    parser.add_argument("--reports", type=int, default=None)
    parser.add_argument("--waits-only", action="store_true",
                        help="only the table of collective waits (with vs without)")
    parser.add_argument("--policy-baseline", metavar="REV",
                        help="only the policy's rank-0 time, this tree against REV")
    parser.add_argument("--rounds", type=int, default=3, help="with --policy-baseline")
    args = parser.parse_args(argv)
    worlds = (1024,) if args.quick else (1024, 4096, 16384)
    if args.policy_baseline:
        policy_ab(args.policy_baseline, (1024,) if args.quick else (1024, 16384),
                  args.reports or 6, args.rounds)
        return 0
    if args.waits_only:
        waits_table(worlds, args.reports or 12)
        return 0
    reports = args.reports or (3 if args.quick else 5)
    t0 = time.perf_counter()
    print(f"## Scale ({platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}, numpy {np.__version__})\n")
    print("Rank-0 time of `ReportGenerator.generate_report`, in ms: median / best of the "
          f"{reports - 1} steady-state reports (the best is the least disturbed by other jobs "
          "on a shared machine), and the first report in brackets (it registers the names). "
          "Without and with the default policy; 2 host sections plus the GPU timers; the "
          "network time of the collectives is not included.\n")
    print("| ranks | GPU timers | rank-0 ms, no policy | rank-0 ms, with policy | of which "
          "the policy (median) | bytes sent per rank per report (steady) | first report bytes "
          "per rank |")
    print("|---|---|---|---|---|---|---|")
    for world in worlds:
        for timers in (100, 1000):
            plain, plain_best, plain_first, steady, first, _ = report_times(world, timers,
                                                                             reports, False)
            pol, pol_best, pol_first, _, _, share = report_times(world, timers, reports, True)
            sb = sum(steady.values())
            fb = sum(first.values())
            detail = ", ".join(f"{k} {v}" for k, v in sorted(steady.items()))
            print(f"| {world:,} | {timers:,} | {plain:.1f} / {plain_best:.1f} "
                  f"({plain_first:.0f}) | {pol:.1f} / {pol_best:.1f} ({pol_first:.0f}) | "
                  f"{share:.1f} | {sb:,} ({detail}) | {fb:,} |", flush=True)
    long_reports = 200 if args.quick else 1000
    print("\nMemory after a long run (tracemalloc):\n")
    print("| what | size |")
    print("|---|---|")
    for timers in (100, 1000):
        held = memory_report_generator(timers, 5, long_reports)
        print(f"| one rank's ReportGenerator, {timers:,} GPU timers + 5 sections, "
              f"{long_reports:,} reports | {held / 1024:,.0f} KiB |", flush=True)
    entries = 20_000 if args.quick else 200_000
    held = memory_detector(10, entries, 1000)
    print(f"| one rank's Detector (host timing), 10 sections, {entries:,} entries, a report "
          f"every 1,000 | {held / 1024:,.0f} KiB |", flush=True)
    held = memory_detector(10, entries // 10, 1000, warm=False)
    print(f"| the same, {entries // 10:,} entries, as the first Detector of a process (first-use "
          f"imports and caches counted) | {held / 1024:,.0f} KiB |", flush=True)
    world = 1024 if args.quick else 16384
    held = memory_policy(world, 100 if args.quick else 300)
    print(f"| rank 0's policy state, {world:,} ranks x 3 metrics | {held / 1024:,.0f} KiB "
          f"({held / world:.0f} B per rank) |")
    print(f"\n(run took {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
