"""Detection quality: our policy versus NVRx's single-report rule, on the same simulated reports.

For every scenario of `benchmarks/simulator.py` and several seeds, the simulator produces the
reports the real `ReportGenerator` would give rank 0, with the default `StragglerPolicy` wired in
(``Report.confirmed``). On each report we also apply NVRx's rule (``identify_stragglers()`` with
its 0.75 thresholds, one report at a time). Metrics per scenario and rule:

- precision: flagged (rank, report) pairs that are injected stragglers / all flagged pairs
  (pairs whose injected slowdown is in the grey zone 0-5 % count as neither);
- recall: injected stragglers flagged at least once after their onset / injected stragglers;
- false alarms per 1,000 reports: flagged pairs that are not stragglers, per 1,000 reports;
- reports to detect: reports from a straggler's onset to its first flag (1 = the first slow
  report), median and worst over the detected stragglers.

A sweep then replays the same reports through policies that differ from the defaults in one
setting each, to show which defaults the data supports.

    python benchmarks/quality.py            # full run (a few minutes on 2 cores)
    python benchmarks/quality.py --quick    # small world, few seeds (for tests)
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import platform
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import simulator
from straggler.analysis.policy import PolicyConfig, StragglerPolicy, observation_from_report


@dataclass
class Run:
    """What one (scenario, seed) run produced, report by report."""

    scenario: str
    seed: int
    truth: list[frozenset[int]]
    grey: list[frozenset[int]]
    observations: list[tuple[np.ndarray, dict[str, np.ndarray]]]
    flags: dict[str, list[frozenset[int]]] = field(default_factory=dict)


@dataclass
class Score:
    """Quality of one rule on a set of runs."""

    tp: int = 0
    fp: int = 0
    reports: int = 0
    stragglers: int = 0
    detected: int = 0
    delays: list[int] = field(default_factory=list)

    def add(self, run: Run, flags: list[frozenset[int]]) -> None:
        onset: dict[int, int] = {}
        for t, truth in enumerate(run.truth):
            for r in truth:
                onset.setdefault(r, t)
        first: dict[int, int] = {}
        for t, (f, truth, grey) in enumerate(zip(flags, run.truth, run.grey, strict=True)):
            self.tp += len(f & truth)
            self.fp += len(f - truth - grey)
            for r in f & truth:
                first.setdefault(r, t)
        self.reports += len(flags)
        self.stragglers += len(onset)
        self.detected += len(first)
        self.delays += [first[r] - onset[r] + 1 for r in first]

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        return self.detected / self.stragglers if self.stragglers else math.nan

    @property
    def false_alarms_per_1k(self) -> float:
        return 1000.0 * self.fp / self.reports if self.reports else math.nan

    def delay(self) -> str:
        if not self.delays:
            return "-"
        return f"{np.median(self.delays):g} / {max(self.delays)}"


def simulate(names: Sequence[str], world: int, reports: int, seeds: Iterable[int]) -> list[Run]:
    """Run every scenario and seed through the real reporting path and the default policy."""
    runs = []
    for name in names:
        sc = simulator.scenario(name)
        roles = sc.roles(world) if sc.roles else None
        for seed in seeds:
            sim = simulator.SimWorld(world, policy=True, roles=roles)
            run = Run(name, seed, [], [], [], {"policy": [], "nvrx": []})
            for sample in simulator.generate(sc, world, reports, seed):
                rep = sim.report(sample)
                run.truth.append(sample.truth)
                run.grey.append(sample.grey)
                run.flags["policy"].append(frozenset(s.rank for s in rep.confirmed))
                run.flags["nvrx"].append(simulator.nvrx_flags(rep))
                run.observations.append(observation_from_report(rep))
            runs.append(run)
    return runs


def replay(runs: list[Run], config: PolicyConfig, world: int) -> list[list[frozenset[int]]]:
    """The confirmed sets a policy with ``config`` would give on the stored reports."""
    out = []
    for run in runs:
        sc = simulator.scenario(run.scenario)
        policy = StragglerPolicy(config, roles=sc.roles(world) if sc.roles else None)
        out.append([policy.update(ranks, times).confirmed for ranks, times in run.observations])
    return out


def _fmt(x: float, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def quality_table(runs: list[Run], names: Sequence[str]) -> str:
    lines = ["| scenario | rule | precision | recall | false alarms / 1k reports | "
             "reports to detect (median / worst) |", "|---|---|---|---|---|---|"]
    for name in names:
        for rule, label in (("policy", "ours (default policy)"), ("nvrx", "NVRx rule, 0.75")):
            score = Score()
            for run in runs:
                if run.scenario == name:
                    score.add(run, run.flags[rule])
            lines.append(f"| {name} | {label} | {_fmt(score.precision)} | "
                         f"{_fmt(score.recall)} | {_fmt(score.false_alarms_per_1k, 1)} | "
                         f"{score.delay()} |")
    return "\n".join(lines)


NEGATIVE = ("clean", "mild", "jobwide", "noisy", "noisy_all", "transient", "pipeline_noroles")


def sweep_variants(base: PolicyConfig) -> list[tuple[str, PolicyConfig]]:
    """The default and one-setting-away variants of it."""
    r = dataclasses.replace
    out = [("defaults", base)]
    for th in (0.90, 0.95, 0.98):
        out.append((f"threshold={th}", r(base, threshold=th,
                                          clear_threshold=max(th, base.clear_threshold))))
    out.append(("threshold=0.99, min_effect=0.02",
                r(base, threshold=0.99, clear_threshold=0.99, min_effect=0.02)))
    for me in (0.02, 0.06):
        out.append((f"min_effect={me}", r(base, min_effect=me)))
    for k, n in ((1, 1), (2, 3), (3, 4), (4, 6)):
        out.append((f"k={k}, n={n}", r(base, k=k, n=n)))
    for nz in (0.0, 2.0, 2.5, 4.0):
        out.append((f"noise_z={nz:g}", r(base, noise_z=nz)))
    out.append(("reference=fastest", r(base, reference="fastest")))
    out.append(("individual=always", r(base, individual="always")))
    out.append(("learn_structure=False", r(base, learn_structure=False)))
    return out


def sweep_table(runs: list[Run], world: int) -> str:
    names = sorted({run.scenario for run in runs}, key=list(simulator.SCENARIOS).index)
    lines = ["| policy | precision (all) | recall (all) | recall slow5 | "
             "recall slow10_noisy_all | "
             "false alarms / 1k (clean, mild, jobwide, noisy, noisy_all, transient, pipeline w/o "
             "roles) | "
             "reports to detect slow20 (median / worst) |",
             "|---|---|---|---|---|---|---|"]
    for label, cfg in sweep_variants(PolicyConfig()):
        flags = replay(runs, cfg, world)
        total = Score()
        per: dict[str, Score] = {n: Score() for n in names}
        for run, f in zip(runs, flags, strict=True):
            total.add(run, f)
            per[run.scenario].add(run, f)
        fa = ", ".join(_fmt(per[n].false_alarms_per_1k, 1) if n in per else "-"
                       for n in NEGATIVE)
        lines.append(f"| {label} | {_fmt(total.precision)} | {_fmt(total.recall)} | "
                     f"{_fmt(per.get('slow5', Score()).recall)} | "
                     f"{_fmt(per.get('slow10_noisy_all', Score()).recall)} | {fa} | "
                     f"{per.get('slow20', Score()).delay()} |")
    return "\n".join(lines)


LARGE = ("clean", "noisy", "noisy_all", "transient", "slow5", "slow10_noisy_all", "slow_node")


def large_world_tables(world: int, reports: int, seeds: Iterable[int]) -> tuple[str, str]:
    """Quality at a large world (false alarms grow with the number of ranks), and the
    persistence and noise-gate settings there."""
    runs = simulate(LARGE, world, reports, seeds)
    main = quality_table(runs, LARGE)
    base = PolicyConfig()
    r = dataclasses.replace
    variants = [("defaults", base), ("noise_z=2.5", r(base, noise_z=2.5)),
                ("k=3, n=4", r(base, k=3, n=4)),
                ("k=3, n=4, noise_z=2.5", r(base, k=3, n=4, noise_z=2.5))]
    negatives = ("clean", "noisy", "noisy_all", "transient")
    lines = ["| policy | false alarms / 1k (" + ", ".join(negatives) + ") | recall slow5, "
             "reports to detect | recall slow10_noisy_all, reports to detect | slow_node "
             "reports to detect |", "|---|---|---|---|---|"]
    for label, cfg in variants:
        flags = replay(runs, cfg, world)
        per: dict[str, Score] = {n: Score() for n in LARGE}
        for run, f in zip(runs, flags, strict=True):
            per[run.scenario].add(run, f)
        fa = ", ".join(_fmt(per[n].false_alarms_per_1k, 1) for n in negatives)
        lines.append(f"| {label} | {fa} | {_fmt(per['slow5'].recall)}, {per['slow5'].delay()} | "
                     f"{_fmt(per['slow10_noisy_all'].recall)}, "
                     f"{per['slow10_noisy_all'].delay()} | {per['slow_node'].delay()} |")
    return main, "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Detection quality table (policy vs NVRx rule)")
    parser.add_argument("--quick", action="store_true", help="small world and few seeds")
    parser.add_argument("--world", type=int, default=None)
    parser.add_argument("--reports", type=int, default=None)
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--no-sweep", action="store_true", help="skip the defaults sweep")
    parser.add_argument("--no-large", action="store_true",
                        help="skip the large-world tables (16,384 ranks)")
    parser.add_argument("--sweep-seeds", type=int, default=None,
                        help="seeds replayed by the sweep (default: 3, --quick: 1)")
    parser.add_argument("--scenarios", nargs="*", default=list(simulator.SCENARIOS))
    args = parser.parse_args(argv)
    world = args.world or (64 if args.quick else 256)
    reports = args.reports or (20 if args.quick else 28)
    seeds = range(args.seeds or (2 if args.quick else 6))
    t0 = time.perf_counter()
    runs = simulate(args.scenarios, world, reports, seeds)
    print(f"## Detection quality ({world} simulated ranks, {reports} reports per run, "
          f"{len(seeds)} seeds per scenario; {platform.processor() or platform.machine()}, "
          f"{time.perf_counter() - t0:.0f} s)\n")
    print(quality_table(runs, args.scenarios))
    if not args.no_sweep:
        t1 = time.perf_counter()
        sweep_seeds = args.sweep_seeds or (1 if args.quick else 3)
        table = sweep_table([r for r in runs if r.seed < sweep_seeds], world)
        print(f"\n## Policy settings, one at a time from the defaults (the same reports, "
              f"first {sweep_seeds} seeds; {time.perf_counter() - t1:.0f} s)\n")
        print(table)
    if not args.no_large:
        big = 1024 if args.quick else 16384
        t2 = time.perf_counter()
        main_table, settings = large_world_tables(big, reports, range(1))
        print(f"\n## A large world: {big:,} ranks (one seed; {time.perf_counter() - t2:.0f} s)"
              "\n")
        print(main_table)
        print(f"\nPersistence and noise gate at {big:,} ranks (the same reports):\n")
        print(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
