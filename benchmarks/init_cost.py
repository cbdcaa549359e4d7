"""What a rank's first ``Detector.initialize`` costs: wall time, memory it leaves, modules it
imports; this tree against a baseline revision, measured in the same run.

Each measurement is a fresh interpreter (what a training process pays once) that has already
imported torch, numpy and straggler and joined a one-rank gloo group, so only the detector's
own first-use work is counted: ``Detector.initialize()`` with its defaults (no report log, no
exporter), then the first section and the first report. Time runs and memory runs
(tracemalloc, which slows imports) are separate interpreters; baseline and this tree
alternate. The baseline is ``--baseline`` (a git revision, default ``main``), imported the
same way as this tree (`_baseline.py`: a temporary git worktree, this tree's extensions).

    .venv/bin/python benchmarks/init_cost.py [--baseline main] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _baseline import REPO, baseline_tree, run_in_tree, short_rev

CHILD = r"""
import gc, json, sys, tempfile, time, tracemalloc
mode = sys.argv[1]
import numpy, torch, torch.distributed as dist
from straggler import Detector
dist.init_process_group("gloo", init_method="file://" + tempfile.mktemp(), rank=0, world_size=1)
gc.collect()
before = set(sys.modules)
if mode == "mem":
    tracemalloc.start()
t0 = time.perf_counter()
Detector.initialize(node_name="node0")
t1 = time.perf_counter()
held_init = tracemalloc.get_traced_memory()[0] if mode == "mem" else 0
with Detector.detection_section("step", profile_cuda=False):
    pass
Detector.generate_report()
t2 = time.perf_counter()
held_report = tracemalloc.get_traced_memory()[0] if mode == "mem" else 0
new = sorted(set(sys.modules) - before)
Detector.shutdown()
print(json.dumps({"init_ms": (t1 - t0) * 1e3, "report_ms": (t2 - t1) * 1e3,
                  "init_kib": held_init / 1024, "report_kib": (held_report - held_init) / 1024,
                  "modules": new}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision (default: main)")
    parser.add_argument("--runs", type=int, default=7, help="interpreters per tree and mode")
    args = parser.parse_args()
    with baseline_tree(args.baseline) as base:
        trees = {"baseline": base, "this tree": str(REPO)}
        results: dict[str, dict[str, list[dict]]] = {k: {"time": [], "mem": []} for k in trees}
        for tree in trees.values():  # writes __pycache__: no run below compiles the sources
            run_in_tree(tree, CHILD, ["time"])
        for i in range(args.runs):
            order = list(trees) if i % 2 == 0 else list(trees)[::-1]
            for mode in ("time", "mem"):
                for name in order:
                    results[name][mode].append(run_in_tree(trees[name], CHILD, [mode]))
    rev = short_rev(args.baseline)
    med = {name: {key: statistics.median(r[key] for r in res["time" if "ms" in key else "mem"])
                  for key in ("init_ms", "report_ms", "init_kib", "report_kib")}
           for name, res in results.items()}
    print(f"First Detector.initialize() (defaults, 1-rank gloo group) and the first report; "
          f"medians of {args.runs} fresh interpreters each; baseline {args.baseline} ({rev}).\n")
    print("| | initialize ms | memory held after it, KiB | first section + report ms | "
          "memory the report adds, KiB | modules imported |")
    print("|---|---|---|---|---|---|")
    for name in trees:
        m = med[name]
        mods = len(results[name]["time"][0]["modules"])
        print(f"| {name} | {m['init_ms']:.1f} | {m['init_kib']:,.0f} | {m['report_ms']:.1f} | "
              f"{m['report_kib']:,.0f} | {mods} |")
    b, t = med["baseline"], med["this tree"]
    print(f"| ratio (this tree / baseline) | {t['init_ms'] / b['init_ms']:.2f} | "
          f"{t['init_kib'] / b['init_kib']:.2f} | {t['report_ms'] / b['report_ms']:.2f} | "
          f"{t['report_kib'] / max(b['report_kib'], 1e-9):.2f} | |")
    gone = sorted(set(results["baseline"]["time"][0]["modules"])
                  - set(results["this tree"]["time"][0]["modules"]))
    added = sorted(set(results["this tree"]["time"][0]["modules"])
                   - set(results["baseline"]["time"][0]["modules"]))
    print(f"\nNo longer imported: {', '.join(gone) or 'none'}")
    print(f"Newly imported: {', '.join(added) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
