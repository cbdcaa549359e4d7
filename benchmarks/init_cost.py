"""What a rank's first ``import straggler`` and ``Detector.initialize`` cost: wall time, memory
they hold, modules they import; this tree against a baseline revision, in the same run.

Each measurement is a fresh interpreter (what a training process pays once) that has already
imported torch and numpy: then ``from straggler import Detector``, a one-rank gloo group,
``Detector.initialize()`` with its defaults (no report log, no exporter), the first section and
the first report. Time runs and memory runs
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
gc.collect()
before = set(sys.modules)
if mode == "mem":
    tracemalloc.start()
t0 = time.perf_counter()
from straggler import Detector
import_ms = (time.perf_counter() - t0) * 1e3
import_kib = tracemalloc.get_traced_memory()[0] / 1024 if mode == "mem" else 0
import_modules = len(set(sys.modules) - before)
tracemalloc.stop()
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
print(json.dumps({"import_ms": import_ms, "import_kib": import_kib,
                  "import_modules": import_modules, "init_ms": (t1 - t0) * 1e3,
                  "report_ms": (t2 - t1) * 1e3,
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
    rows = {"import_ms": "`from straggler import Detector`, ms",
            "import_kib": "memory it holds, KiB",
            "import_modules": "modules it imports",
            "init_ms": "first `Detector.initialize()`, ms",
            "init_kib": "memory it holds, KiB",
            "init_modules": "modules it imports",
            "report_ms": "first section and report, ms",
            "report_kib": "memory they add, KiB"}
    for res in results.values():
        for r in res["time"]:
            r["init_modules"] = len(r["modules"])
    med = {name: {key: statistics.median(r[key] for r in res["mem" if "kib" in key else "time"])
                  for key in rows}
           for name, res in results.items()}
    print(f"A rank's first import, initialize (defaults, 1-rank gloo group) and report; medians "
          f"of {args.runs} fresh interpreters each; baseline {args.baseline} ({rev}).\n")
    print("| what | baseline | this tree | x |")
    print("|---|---:|---:|---:|")
    for key, what in rows.items():
        b, t = med["baseline"][key], med["this tree"][key]
        print(f"| {what} | {b:,.1f} | {t:,.1f} | {t / b if b else float('nan'):.2f} |")
    gone = sorted(set(results["baseline"]["time"][0]["modules"])
                  - set(results["this tree"]["time"][0]["modules"]))
    added = sorted(set(results["this tree"]["time"][0]["modules"])
                   - set(results["baseline"]["time"][0]["modules"]))
    print(f"\nNo longer imported: {', '.join(gone) or 'none'}")
    print(f"Newly imported: {', '.join(added) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
