"""Report time and RSS before, during and after a churn of 100,000 section names (one process).

Phases: `--base` reports with one section ("step"), then `--churn-reports` reports that each add
`--names-per-report` new section names (entered once each) next to "step", then `--after`
reports with "step" alone. Prints a markdown table: per phase, the median report time and the
RSS at its end, with ratios to the baseline phase measured in the same run.

    .venv/bin/python benchmarks/names_churn.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=int, default=5)
    ap.add_argument("--churn-reports", type=int, default=12)
    ap.add_argument("--names-per-report", type=int, default=8_400)
    ap.add_argument("--after", type=int, default=5)
    ap.add_argument("--cuda", action="store_true",
                    help="profile_cuda=True: GPU timers too (point STRAGGLER_LIBCUDA at a driver, "
                         "e.g. build/sim/libcuda.so.1, the simulated one)")
    args = ap.parse_args()
    from straggler import Detector

    Detector.initialize(report_time_interval=0, telemetry=False, node_name="bench")
    serial = 0

    def report(new_names: int) -> float:
        nonlocal serial
        for _ in range(new_names):
            with Detector.detection_section(f"name-{serial}", profile_cuda=args.cuda):
                pass
            serial += 1
        for _ in range(5):
            with Detector.detection_section("step", profile_cuda=args.cuda):
                pass
        start = time.perf_counter()
        Detector.generate_report()
        return (time.perf_counter() - start) * 1e3

    for _ in range(3):  # warm-up (imports, first registry)
        report(0)
    rows = []
    for phase, n, per in (("before", args.base, 0), ("during", args.churn_reports,
                                                     args.names_per_report),
                          ("after", args.after, 0)):
        times = [report(per) for _ in range(n)]
        rows.append((phase, times, rss_mb()))
    core = Detector.core()
    live = len(core.sections)
    engine = f"{core.engine.backend} engine" if core.engine is not None else "no engine"
    Detector.shutdown()
    base_ms, base_rss = statistics.median(rows[0][1]), rows[0][2]
    print(f"{serial:,} names in {args.churn_reports} reports; live sections at the end: {live}; "
          f"{engine}\n")
    print("| phase | report time (median ms) | vs before | reports after churn, ms | "
          "RSS (MB) | RSS - before (MB) |")
    print("|---|---|---|---|---|---|")
    for phase, times, rss in rows:
        first = ", ".join(f"{t:.2f}" for t in times[:3]) if phase == "after" else ""
        print(f"| {phase} | {statistics.median(times):.2f} | "
              f"{statistics.median(times) / base_ms:.2f}x | {first} | {rss:.0f} | "
              f"{rss - base_rss:+.0f} |")


if __name__ == "__main__":
    main()
