"""Soak: a multi-rank gloo job with the detector on, reporting about every second, for minutes.

Does report time or memory creep up over a long run? Each rank trains a small MLP (forward and
backward in a ``compute`` section, the gradient all-reduce in a ``communication`` section) and
calls ``Detector.generate_report_if_interval_elapsed()`` every step with
``report_time_interval=1``. At each report every rank records how long that call took and its
resident set size (``/proc/self/statm``, one read per report: the script's own overhead is a
clock read per step), with two baselines that move with the machine's load but not with the
detector's state: the mean step time since the previous report (training only, the report call
excluded) and the load average. At the end the script prints one markdown row per rank: the
medians of the first and the last window of reports (a minute, or a third of the run when it
is shorter than three minutes) and their ratio end/start.

    python benchmarks/soak.py                    # 2 ranks, 10 minutes
    python benchmarks/soak.py --minutes 1 --world-size 4
    python benchmarks/soak.py --simulated-gpu    # GPU timers and NVML from build/sim (make sim)

The ranks spawn themselves (no torchrun); the process group rendezvouses over a file store.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import multiprocessing as mp
import os
import platform
import queue
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIM_DIR = Path(__file__).resolve().parents[1] / "build" / "sim"
SIM_LIBCUDA, SIM_LIBNVML = SIM_DIR / "libcuda.so.1", SIM_DIR / "libnvidia-ml.so.1"
SIM_GPU_MS = 2.0  # simulated GPU work per step, in the compute section
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; bad values exit with status 2 and a message naming them."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0, help="run length (default 10)")
    p.add_argument("--world-size", type=int, default=2, help="ranks, 2-4 (default 2)")
    p.add_argument("--report-interval", type=float, default=1.0,
                   help="report_time_interval in seconds (default 1)")
    p.add_argument("--step-ms", type=float, default=20.0,
                   help="least duration of a step; the rest is sleep, which keeps the load of a "
                        "shared machine low (default 20)")
    p.add_argument("--hidden", type=int, default=128, help="MLP width (default 128)")
    p.add_argument("--simulated-gpu", action="store_true",
                   help="time simulated GPU work and sample simulated NVML (needs `make sim`)")
    args = p.parse_args(argv)
    if not args.minutes > 0:
        p.error(f"`--minutes={args.minutes!r}` must be positive")
    if not 2 <= args.world_size <= 4:
        p.error(f"`--world-size={args.world_size!r}` must be between 2 and 4")
    if not args.report_interval > 0:
        p.error(f"`--report-interval={args.report_interval!r}` must be positive")
    if not args.step_ms >= 0:
        p.error(f"`--step-ms={args.step_ms!r}` must be zero or positive")
    if args.simulated_gpu and not (SIM_LIBCUDA.exists() and SIM_LIBNVML.exists()):
        p.error(f"--simulated-gpu needs {SIM_LIBCUDA} and {SIM_LIBNVML}: run `make sim` first")
    return args


def rss_mb() -> float:
    """Resident set size of this process in MiB (Linux)."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE_MB


class _SimulatedGpu:
    """Stream 0 of this rank's simulated GPU: queue work, then wait for it (as a step does)."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(str(SIM_LIBCUDA))
        lib.simcuda_enqueue.argtypes = [ctypes.c_void_p, ctypes.c_double]
        ctx, self._event = ctypes.c_void_p(), ctypes.c_void_p()
        for rc in (lambda: lib.cuInit(0),
                   lambda: lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0),
                   lambda: lib.cuCtxSetCurrent(ctx),
                   lambda: lib.cuEventCreate(ctypes.byref(self._event), 2)):  # DISABLE_TIMING
            if rc() != 0:
                raise RuntimeError(f"the simulated CUDA driver {SIM_LIBCUDA} failed to start")
        self._lib = lib

    def run(self, ms: float) -> None:
        self._lib.simcuda_enqueue(None, ms)
        self._lib.cuEventRecord(self._event, None)
        self._lib.cuEventSynchronize(self._event)


def _rank(rank: int, args: argparse.Namespace, store: str, results: Any) -> None:
    """One rank: train, report, record (seconds since start, report ms, RSS MiB) per report."""
    try:
        results.put((rank, True, _train(rank, args, store)))
    except BaseException as exc:  # noqa: BLE001 - the parent prints it
        results.put((rank, False, f"{type(exc).__name__}: {exc}"))


def _train(rank: int, args: argparse.Namespace, store: str) -> dict[str, Any]:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                            world_size=args.world_size, timeout=datetime.timedelta(seconds=120))
    sim = None
    if args.simulated_gpu:  # before straggler loads the driver and NVML: they read it once
        os.environ.update({"STRAGGLER_LIBCUDA": str(SIM_LIBCUDA),
                           "STRAGGLER_LIBNVML": str(SIM_LIBNVML),
                           "SIMCUDA_DEVICE_COUNT": str(args.world_size),
                           "SIMCUDA_VISIBLE_DEVICES": str(rank)})
        sim = _SimulatedGpu()
    from straggler import Detector

    Detector.initialize(report_time_interval=args.report_interval, comm_timeout_s=60.0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn(32, args.hidden, generator=gen)
    y = torch.randint(0, 10, (32,), generator=gen)
    params = list(model.parameters())
    step_s = args.step_ms / 1000.0
    duration_s = args.minutes * 60.0
    # (seconds since start, report ms, RSS MiB, mean step ms since the last report, load avg)
    samples: list[tuple[float, float, float, float, float]] = []
    train_s, train_steps = 0.0, 0
    start = time.perf_counter()
    # Every rank stops on the same step: rank 0's clock decides, carried by the all-reduce.
    stop = torch.zeros(1)
    steps = 0
    while True:
        t_step = time.perf_counter()
        with Detector.detection_section("compute", profile_cuda=sim is not None):
            if sim is not None:
                sim.run(SIM_GPU_MS)
            opt.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(x), y).backward()
        with Detector.detection_section("allreduce", kind="communication"):
            flat = torch.cat([p.grad.reshape(-1) for p in params] + [stop])
            flat[-1] = 1.0 if rank == 0 and t_step - start >= duration_s else 0.0
            dist.all_reduce(flat)
        offset = 0
        for p in params:  # the averaged gradients back into place
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p) / args.world_size)
            offset += p.numel()
        opt.step()
        steps += 1
        t0 = time.perf_counter()
        train_s += t0 - t_step
        train_steps += 1
        Detector.generate_report_if_interval_elapsed()
        t1 = time.perf_counter()
        if Detector.is_interval_elapsed():  # true for the rest of a report's iteration
            samples.append((t1 - start, (t1 - t0) * 1000.0, rss_mb(),
                            train_s * 1000.0 / train_steps, os.getloadavg()[0]))
            train_s, train_steps = 0.0, 0
        if flat[-1] > 0:
            break
        rest = step_s - (time.perf_counter() - t_step)
        if rest > 0:
            time.sleep(rest)
    enabled = Detector.core() is not None and Detector.core().enabled
    Detector.shutdown()
    dist.destroy_process_group()
    return {"samples": samples, "steps": steps, "elapsed_s": time.perf_counter() - start,
            "still_enabled": enabled}


def summarize(rank: int, result: dict[str, Any], window_s: float) -> dict[str, Any]:
    """Medians over the first and the last `window_s` of one rank's reports."""
    samples = result["samples"]
    # Windows start at the first report and end at the last (the first comes after the
    # interval's estimation steps).
    first = [s for s in samples if s[0] <= samples[0][0] + window_s] if samples else []
    last = [s for s in samples if s[0] >= samples[-1][0] - window_s] if samples else []

    def med(rows: list, i: int) -> float:
        return statistics.median(r[i] for r in rows) if rows else float("nan")

    row = {"rank": rank, "reports": len(samples), "steps": result["steps"],
           "still_enabled": result["still_enabled"],
           "ms_start": med(first, 1), "ms_end": med(last, 1),
           "rss_start": med(first, 2), "rss_end": med(last, 2),
           "step_start": med(first, 3), "step_end": med(last, 3),
           "load_start": med(first, 4), "load_end": med(last, 4)}
    row["ms_ratio"] = row["ms_end"] / row["ms_start"] if row["ms_start"] > 0 else float("nan")
    for key in ("rss", "step"):
        a, b = row[f"{key}_start"], row[f"{key}_end"]
        row[f"{key}_ratio"] = b / a if a > 0 else float("nan")
    return row


def format_table(rows: list[dict[str, Any]], window_s: float) -> str:
    """The markdown table: one row per rank."""
    w = f"{window_s:g} s"
    lines = [(f"| rank | reports | steps | report ms, first {w} | report ms, last {w} "
              f"| end/start | RSS MiB, first {w} | RSS MiB, last {w} | end/start "
              f"| step ms (baseline), first {w} | last {w} | end/start "
              "| detector on at the end |"),
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['rank']} | {r['reports']} | {r['steps']} | {r['ms_start']:.2f} "
                     f"| {r['ms_end']:.2f} | {r['ms_ratio']:.2f} | {r['rss_start']:.1f} "
                     f"| {r['rss_end']:.1f} | {r['rss_ratio']:.3f} | {r['step_start']:.2f} "
                     f"| {r['step_end']:.2f} | {r['step_ratio']:.2f} "
                     f"| {'yes' if r['still_enabled'] else 'NO'} |")
    lines.append(f"\nLoad average (1 min), median over the first {w}: "
                 f"{rows[0]['load_start']:.1f}; over the last {w}: {rows[0]['load_end']:.1f}.")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Spawn the ranks, wait for them (the run plus a margin) and return their results."""
    ctx = mp.get_context("spawn")
    tmpdir = tempfile.mkdtemp(prefix="straggler-soak-")
    results = ctx.Queue()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    procs = [ctx.Process(target=_rank, args=(r, args, os.path.join(tmpdir, "store"), results),
                         daemon=True) for r in range(args.world_size)]
    try:
        for p in procs:
            p.start()
        deadline = time.monotonic() + args.minutes * 60.0 + 180.0
        out: dict[int, dict[str, Any]] = {}
        while len(out) < len(procs):
            try:
                rank, ok, value = results.get(timeout=1.0)
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise TimeoutError("the soak ranks did not finish in time") from None
                # A rank whose result came may end as it likes (torch's gloo can abort a
                # finished process at exit: docs/detector.md "Exit").
                dead = [p.name for r, p in enumerate(procs)
                        if r not in out and not p.is_alive() and p.exitcode != 0]
                if dead:
                    raise RuntimeError(f"ranks exited without a result: {dead}") from None
                continue
            if not ok:
                raise RuntimeError(f"rank {rank} failed: {value}")
            out[rank] = value
        for p in procs:
            p.join(timeout=10.0)
        return [out[r] for r in range(len(procs))]
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(timeout=5.0)
        shutil.rmtree(tmpdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    window_s = min(60.0, args.minutes * 60.0 / 3.0)
    print(f"soak: {args.world_size} gloo ranks, {args.minutes:g} min, report every "
          f"{args.report_interval:g} s, step >= {args.step_ms:g} ms"
          f"{', SIMULATED GPU and NVML' if args.simulated_gpu else ', CPU (host timers)'}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)
    results = run(args)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min), "
          f"{os.getloadavg()[1]:.1f} (5 min)", flush=True)
    rows = [summarize(r, res, window_s) for r, res in enumerate(results)]
    print(format_table(rows, window_s), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
