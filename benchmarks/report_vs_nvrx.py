"""Time `ReportGenerator.generate_report` next to NVRx's on the same summaries, same run.

Both generators get identical section and GPU-timer summaries (5 sections, K GPU timers with
NVRx-style kernel names) and compute relative and individual scores gathered on the first rank.
Rows: first report (name exchange included) and the median of steady-state reports, on rank 0,
with a barrier before every report so the time is the report's own. The two take turns
(ours, NVRx, ours, NVRx) to share the machine's noise. Needs nvidia-resiliency-ext (the Makefile
installs 0.4.1).

    .venv/bin/python benchmarks/report_vs_nvrx.py [--ranks 1 4] [--timers 10 1000] [--reps 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))


def _measure(rank: int, world_size: int, timers: int, reps: int, rounds: int) -> dict:
    import torch.distributed as dist
    from nvidia_resiliency_ext.straggler.reporting import ReportGenerator as NvrxGenerator
    from nvidia_resiliency_ext.straggler.statistics import Statistic as NvrxStatistic
    from straggler.analysis.statistics import Statistic
    from straggler.dist.comm import Comm
    from straggler.reporting.generator import ReportGenerator

    def summaries(stat):
        def one(med):
            return {stat.MIN: med, stat.MAX: med, stat.MED: med, stat.AVG: med, stat.STD: 0.0,
                    stat.NUM: 100}
        sections = {f"section{i}": one(1.0 + i) for i in range(5)}
        gpus = {f"kernel{i}_blk_128_1_1_grid_{i}_1_1": one(0.01 * (i + 1) * (rank + 1))
                for i in range(timers)}
        return sections, gpus

    makers = {
        "straggler": (lambda: ReportGenerator("all", True, node_name=f"node{rank}",
                                              comm=Comm.create(timeout_s=120)), Statistic),
        "NVRx": (lambda: NvrxGenerator(["relative_perf_scores", "individual_perf_scores"], True,
                                       node_name=f"node{rank}"), NvrxStatistic),
    }
    barrier = dist.barrier if dist.is_initialized() else (lambda: None)
    out: dict[str, dict[str, list[float]]] = {}
    for _ in range(rounds):
        for name, (make, stat) in makers.items():
            sections, gpus = summaries(stat)
            gen = make()
            times = []
            for _ in range(reps + 1):
                barrier()
                start = time.perf_counter()
                gen.generate_report(sections, gpus)
                times.append((time.perf_counter() - start) * 1e3)
            row = out.setdefault(name, {"first": [], "steady": []})
            row["first"].append(times[0])
            row["steady"].append(statistics.median(times[1:]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--timers", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from _multirank import run_ranks

    print("| ranks | GPU timers | report | straggler (ms) | NVRx (ms) | straggler / NVRx |")
    print("|---:|---:|---|---:|---:|---:|")
    for ranks in args.ranks:
        for timers in args.timers:
            if ranks == 1:
                result = _measure(0, 1, timers, args.reps, args.rounds)
            else:
                result = run_ranks(_measure, ranks, timers, args.reps, args.rounds,
                                   timeout_s=600)[0]
            for kind in ("first", "steady"):
                ours = min(result["straggler"][kind])  # best round: least disturbed by others
                theirs = min(result["NVRx"][kind])
                print(f"| {ranks} | {timers:,} | {kind} | {ours:.2f} | {theirs:.2f} | "
                      f"{ours / theirs:.2f} |", flush=True)


if __name__ == "__main__":
    main()
