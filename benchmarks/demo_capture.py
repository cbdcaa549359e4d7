"""Capture the policy's input of real demo runs, and replay it through the tail test's settings.

    python benchmarks/demo_capture.py --runs 8 --background 4      # capture, then replay
    python benchmarks/demo_capture.py --replay-only                 # tests/data/demo_reports.npz

Each run is examples/demo.py's training (4 CPU ranks, DDP on gloo, 2 s reports, nobody slowed
unless ``--slowdown``/``--every`` say so) for ``--reports`` reports, beside a ``--background``
rank DDP job (benchmarks/record_traces.py, the same model) that loads the machine the way
other multi-rank jobs do: many short compute bursts and collectives, so the demo's 1 ms
forward is cut by the scheduler (busy spinning processes do not do that: their slices are
long). Rank 0 records every report's `StragglerPolicy.update` arguments (medians, upper
quartiles, 5th percentiles, within-window errors, steps, culprit shares). The replay feeds
them to fresh policies, so the settings are compared on the same reports (the live report
cadence, early reports included, is the default policy's of the capture).

The clean runs of tests/data/demo_reports.npz (tests/analysis/test_policy_tails.py) were
captured on 2026-11-24 (docs/policy.md, "The tail test").
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
OUT = ROOT / "tests" / "data" / "demo_reports.npz"
TIMES = ("gpu", "section:forward", "section:forward:p75", "section:optimizer",
         "section:optimizer:p75")
STEPPED = TIMES[1:]
LOW = ("section:forward", "section:optimizer")


def _rank(rank: int, args: argparse.Namespace, port: int, path: str, reports: int,
          every: int) -> None:
    """One demo rank whose policy input is recorded (rank 0 writes it to ``path``)."""
    import pickle
    import random

    import demo
    from straggler.analysis import policy

    demo.verdict_is_in = lambda reps: len(reps) >= reports
    captured: list[dict] = []
    update = policy.StragglerPolicy.update

    def recording(self, ranks, times, steps=None, spread=None, culprits=None, low=None,
                  *rest, **more):  # what the policy reads of a report (later inputs: not kept)
        captured.append({"times": {k: np.asarray(v) for k, v in times.items()},
                         "steps": dict(steps or {}),
                         "spread": {k: np.asarray(v) for k, v in (spread or {}).items()},
                         "low": {k: np.asarray(v) for k, v in (low or {}).items()},
                         "culprits": dict(culprits or {})})
        return update(self, ranks, times, steps, spread, culprits, low, *rest, **more)

    policy.StragglerPolicy.update = recording
    if every > 1 and rank == args.slow_rank:  # intermittent: the demo's sleep 1 step in `every`
        rng, sleep = random.Random(rank), time.sleep

        class _Time:
            def __getattr__(self, name: str):
                return getattr(time, name)

            def sleep(self, s: float) -> None:
                if rng.random() < 1.0 / every:
                    sleep(s)

        demo.time = _Time()
    try:
        demo.train(rank, args, port)
    finally:
        if rank == 0:
            with open(path, "wb") as f:
                pickle.dump(captured, f)


def capture(n_runs: int, background: int, reports: int, slowdown: float, every: int
            ) -> dict[str, np.ndarray]:
    """``n_runs`` demo runs; their reports as arrays (one npz entry per run and field)."""
    import pickle

    import demo
    import torch.multiprocessing as mp

    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    out: dict[str, np.ndarray] = {}
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n_runs):
            bg = None
            if background:
                bg = subprocess.Popen(
                    [sys.executable, str(ROOT / "benchmarks" / "record_traces.py"), "--name",
                     "background", "--world", str(background), "--seconds", "900", "--out",
                     tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    start_new_session=True)
                time.sleep(8)  # its ranks at work
            load = os.getloadavg()[0]
            path = os.path.join(tmp, f"run{i}.pkl")
            args = demo.parse_args(["--slowdown", f"{slowdown:g}"])
            try:
                mp.start_processes(_rank, args=(args, demo.free_port(), path, reports, every),
                                   nprocs=args.world_size, join=True, start_method="spawn")
            finally:
                if bg is not None:  # the background job's own process group
                    os.killpg(bg.pid, signal.SIGKILL)
                    bg.wait()
            with open(path, "rb") as f:
                reps = pickle.load(f)
            name = f"run{i + 1}"
            out[f"{name}/times"] = np.array([[r["times"][m] for m in TIMES] for r in reps])
            out[f"{name}/steps"] = np.array([[r["steps"].get(m, np.nan) for m in STEPPED]
                                             for r in reps])
            out[f"{name}/spread"] = np.array([[r["spread"][m] for m in STEPPED] for r in reps])
            out[f"{name}/low"] = np.array([[r["low"][m] for m in LOW] for r in reps])
            out[f"{name}/culprits"] = np.array(
                [[r["culprits"].get(k, np.nan) for k in range(args.world_size)] for r in reps])
            runs[name] = {"loadavg_1m_start": round(load, 1), "reports": len(reps)}
            print(f"{name}: {len(reps)} reports, load {load:.1f} -> {os.getloadavg()[0]:.1f}",
                  flush=True)
    what = (f"examples/demo.py --slowdown {slowdown:g}" + (f" 1 step in {every}" if every > 1
                                                           else "")
            + f" (4 CPU ranks, gloo, 2 s reports) beside a {background}-rank DDP job")
    out["meta"] = np.array(json.dumps({"times": TIMES, "stepped": STEPPED, "low": LOW,
                                       "runs": runs, "what": what}))
    return {k: (v.astype(np.float32) if k != "meta" else v) for k, v in out.items()}


def replay(path: Path, config) -> list[str]:
    """The runs of a capture in which ``config``'s policy confirmed any rank, with the report."""
    from straggler.analysis.policy import StragglerPolicy

    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        data = {k: z[k].astype(np.float64) for k in z.files if k != "meta"}
    found = []
    for name in meta["runs"]:
        policy = StragglerPolicy(config)
        times = data[f"{name}/times"]
        ranks = np.arange(times.shape[2])
        for i in range(times.shape[0]):
            culprits = {r: float(v) for r, v in enumerate(data[f"{name}/culprits"][i])
                        if np.isfinite(v)}
            decision = policy.update(
                ranks, {m: times[i, j] for j, m in enumerate(meta["times"])},
                {m: float(data[f"{name}/steps"][i, j]) for j, m in enumerate(meta["stepped"])},
                {m: data[f"{name}/spread"][i, j] for j, m in enumerate(meta["stepped"])},
                culprits or None,
                {m: data[f"{name}/low"][i, j] for j, m in enumerate(meta["low"])})
            if decision.newly_confirmed:
                found.append(f"{name} report {i + 1}: rank(s) {sorted(decision.newly_confirmed)}")
                break
    return found


def main(argv: list[str] | None = None) -> int:
    from straggler.analysis.policy import PolicyConfig

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--background", type=int, default=4,
                   help="ranks of the background DDP job (0: none)")
    p.add_argument("--reports", type=int, default=25, help="reports per run")
    p.add_argument("--slowdown", type=float, default=1.0, help="rank 2's forward factor")
    p.add_argument("--every", type=int, default=1,
                   help="slow in 1 step in EVERY (default 1: every step)")
    p.add_argument("--out", type=Path, default=None, help=f"npz to write (e.g. {OUT})")
    p.add_argument("--replay-only", type=Path, nargs="?", const=OUT, default=None,
                   metavar="NPZ", help=f"replay a capture only (default {OUT})")
    args = p.parse_args(argv)
    path = args.replay_only
    if path is None:
        data = capture(args.runs, args.background, args.reports, args.slowdown, args.every)
        path = args.out or Path(tempfile.mkdtemp()) / "demo_reports.npz"
        np.savez_compressed(path, **data)
        print(f"written: {path}")
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
    print(f"{path}: {meta['what']}; {len(meta['runs'])} runs, "
          f"{sum(r['reports'] for r in meta['runs'].values())} reports")
    for name, config in (("default (the tail test)", PolicyConfig()),
                         ("every tail window adds its evidence",
                          PolicyConfig(tail_slow_only=False, tail_full_steps=0.0)),
                         ("upper quartiles off", PolicyConfig(tail_min_effect=10.0))):
        found = replay(path, config)
        print(f"{name}: a rank confirmed in {len(found)} runs" + "".join(
            f"\n  {f}" for f in found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
