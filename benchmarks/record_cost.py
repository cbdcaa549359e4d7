"""What a report log costs rank 0 per report at 1k-16k ranks: unpacking the gathered rows'
telemetry and building the record (on the training thread), encoding its JSON line (on the
writer thread, holding the GIL) and the longest pause that encoding imposes on a thread running
Python beside it, this tree against a baseline revision in the same run, and whether both write
the same line.

The reports are the simulator's (`simulator.SimWorld`: the real `ReportGenerator` with the
default policy and collective waits, 2 sections, 100 GPU timers, one rank 20 % slow), with
every rank's NVML window (50 fields) unpacked from gathered rows (`layout.unpack`) as a GPU
job's report has it, so the `Report` is what rank 0 hands the sinks. Each tree runs in its own
fresh interpreter (`_baseline.py`); the two alternate over ``--rounds`` rounds; a row gives the
median over the rounds of each round's median of ``--repeats`` timings.

    .venv/bin/python benchmarks/record_cost.py [--baseline main] [--worlds 1024 16384]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _baseline import REPO, baseline_tree, run_in_tree, short_rev

CHILD = r"""
import dataclasses, gc, hashlib, json, statistics, sys, threading, time
import simulator
from straggler.sinks import reportlog
from straggler.sinks.record import ReportContext, report_record
world, repeats = int(sys.argv[1]), int(sys.argv[2])
sim = simulator.SimWorld(world, policy=True, waits=True)
for sample in simulator.generate(simulator.scenario("slow20"), world, 4, seed=0, gpu_timers=100):
    report = sim.report(sample)
# A GPU job's report: every rank's NVML window (the 50 fields of straggler.telemetry.window),
# unpacked from the gathered rows as the report generator does (timed: rank 0, training thread).
import numpy as np
from straggler.reporting import layout
from straggler.telemetry.window import FIELDS
first = layout.telemetry_offset(2)
gathered = np.full((world, layout.row_length(2, len(FIELDS), True)), np.nan)
gathered[:, first:first + len(FIELDS)] = (np.arange(len(FIELDS))[None, :] * 31
                                          + np.arange(world)[:, None] * 7) % 101
unpack_ms = []
for _ in range(repeats):
    gc.collect()
    t0 = time.perf_counter()
    telemetry = layout.unpack(gathered, range(world), {"a": 0, "b": 1}, FIELDS, True, True
                              )["rank_telemetry"]
    unpack_ms.append((time.perf_counter() - t0) * 1e3)
report = dataclasses.replace(report, generate_report_elapsed_time=1.0,  # a time: not compared
                             rank_telemetry=telemetry)
context = ReportContext(time_s=1.7e9, iteration=400, window_iterations=100, window_s=60.0,
                        report_ms=50.0, sections=2, gpu_timers=100, run_id="bench")
encode = getattr(reportlog, "encode_line", None) or (  # the baseline's writer: one json.dumps
    lambda r: (json.dumps(r, separators=(",", ":"), allow_nan=False, default=str) + "\n").encode())


def longest_stall(record):
    # The writer thread encodes while this thread runs Python: its longest pause, ms.
    done = threading.Event()
    writer = threading.Thread(target=lambda: (encode(record), done.set()))
    longest, last = 0.0, time.perf_counter()
    writer.start()
    while not done.is_set():
        sum(range(200))
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    writer.join()
    return longest * 1e3


record_ms, line_ms, stall_ms = [], [], []
for _ in range(repeats):
    gc.collect()
    t0 = time.perf_counter()
    record = report_record(report, context)
    t1 = time.perf_counter()
    line = encode(record)
    t2 = time.perf_counter()
    record_ms.append((t1 - t0) * 1e3)
    line_ms.append((t2 - t1) * 1e3)
    stall_ms.append(longest_stall(record))
print(json.dumps({"unpack_ms": statistics.median(unpack_ms),
                  "record_ms": statistics.median(record_ms), "line_ms": statistics.median(line_ms),
                  "stall_ms": statistics.median(stall_ms), "bytes": len(line),
                  "sha": hashlib.sha256(line).hexdigest()}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision (default: main)")
    parser.add_argument("--worlds", type=int, nargs="+", default=[1024, 16384])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = []
    with baseline_tree(args.baseline) as base:
        trees = {"baseline": base, "this tree": str(REPO)}
        for world in args.worlds:
            runs: dict[str, list[dict]] = {name: [] for name in trees}
            for i in range(args.rounds):
                for name in (list(trees) if i % 2 == 0 else list(trees)[::-1]):
                    runs[name].append(run_in_tree(trees[name], CHILD,
                                                  [str(world), str(args.repeats)]))
            rows.append((world, runs))
    print(f"Rank 0's report-log cost per report, ms (median of {args.rounds} rounds x "
          f"{args.repeats}); baseline {args.baseline} ({short_rev(args.baseline)}).\n")
    print("| ranks | what (ms) | baseline | this tree | x |")
    print("|---|---|---:|---:|---:|")
    keys = {"unpack_ms": "unpack the gathered rows (training thread)",
            "record_ms": "record (training thread)", "line_ms": "JSON line (writer thread)",
            "stall_ms": "longest pause of the training thread while the writer encodes"}
    for world, runs in rows:
        for key, what in keys.items():
            b, t = (statistics.median(r[key] for r in runs[name]) for name in trees)
            print(f"| {world:,} | {what} | {b:.1f} | {t:.1f} | {t / b:.2f} |")
        same = len({r["sha"] for rs in runs.values() for r in rs}) == 1
        print(f"| {world:,} | the same line, byte for byte ({runs['this tree'][0]['bytes']:,} "
              f"bytes) | | | {'yes' if same else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
