"""Host overhead: our detection_section, wrapped calls and per-op capture, next to NVRx's.

Measured in one process, interleaved so the machine's load affects every variant alike:

- a bare loop (the baseline), ``with nullcontext()``, a lean class context manager that reads
  ``perf_counter_ns()`` twice and appends to a deque (``_lean.LeanSection``: the reference for
  section cost, "x lean" column), our ``Detector.detection_section`` (host
  timing; on a machine without a GPU ``profile_cuda=True`` falls back to host timing too), a call
  through ``wrap_callables`` versus the plain call, and NVRx 0.4.1's ``detection_section``
  (``nvidia_resiliency_ext.straggler``) with its CUPTI extension replaced by **no-op stand-ins**
  (this machine has no CUDA driver, so the CUPTI calls themselves are not measured; NVRx's
  Python layer, its lock and its counters are);
- per-op capture: a section running small torch ops with ``per_op_capture=True`` versus the
  same section without it, divided by the number of ops;
- step-time overhead of a CPU DDP training loop (2 gloo ranks) with the step inside
  ``detection_section`` and ``generate_report_if_interval_elapsed()`` called every step, at
  about 10 ms and 100 ms per step, against the same loop without the detector.

    python benchmarks/overhead.py            # a few minutes on 2 cores
    python benchmarks/overhead.py --quick    # fewer iterations
    python benchmarks/overhead.py --sections-only   # the section table only (seconds)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _lean import LeanSection

LEAN_ROW = "lean class context manager: 2x perf_counter_ns + deque.append (reference)"


# ------------------------------------------------------------------------------ micro timings
def _per_iter_ns(body: Callable[[int], None], n: int) -> float:
    t0 = time.perf_counter_ns()
    body(n)
    return (time.perf_counter_ns() - t0) / n


def _interleaved(variants: dict[str, Callable[[int], None]], n: int, rounds: int
                 ) -> dict[str, float]:
    """Median over ``rounds`` of the ns per iteration of each variant, run in turn."""
    samples: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(rounds):
        for name, body in variants.items():
            samples[name].append(_per_iter_ns(body, n))
    return {k: statistics.median(v) for k, v in samples.items()}


def _install_nvrx_cupti_stub() -> None:
    """No-op stand-in for NVRx's CUPTI extension (``nvrx_cupti_module``): no CUDA here."""
    class CuptiProfiler:  # the methods CuptiManager calls, doing nothing
        def __init__(self, **kwargs): pass
        def initialize(self): pass
        def shutdown(self): pass
        def start(self): pass
        def stop(self): pass
        def get_stats(self): return {}
        def reset(self): pass

    sys.modules["nvrx_cupti_module"] = types.SimpleNamespace(CuptiProfiler=CuptiProfiler)


class _Model:
    def step(self) -> int:
        return 1


def micro(n: int, rounds: int) -> list[tuple[str, float]]:
    """ns per iteration for each variant of the section / call micro benchmark."""
    import logging

    from nvidia_resiliency_ext.straggler import Detector as NvDetector
    from straggler import CallableId, Detector

    logging.getLogger("straggler").setLevel(logging.ERROR)  # the no-GPU notice, once
    _install_nvrx_cupti_stub()

    def bare(k: int) -> None:
        for _ in range(k):
            pass

    def null(k: int) -> None:
        for _ in range(k):
            with contextlib.nullcontext():
                pass

    lean_section = LeanSection()

    def lean(k: int) -> None:
        cm = lean_section
        for _ in range(k):
            with cm:
                pass

    def ours_host(k: int) -> None:
        section = Detector.detection_section
        for _ in range(k):
            with section("s", profile_cuda=False):
                pass

    def ours_held(k: int) -> None:
        cm = Detector.detection_section("held", profile_cuda=False)
        for _ in range(k):
            with cm:
                pass

    def ours_default(k: int) -> None:
        section = Detector.detection_section
        for _ in range(k):
            with section("d"):
                pass

    def ours_step(k: int) -> None:
        section, tick = Detector.detection_section, Detector.generate_report_if_interval_elapsed
        for _ in range(k):
            with section("t", profile_cuda=False):
                pass
            tick()

    def nvrx_host(k: int) -> None:
        section = NvDetector.detection_section
        for _ in range(k):
            with section("s", profile_cuda=False):
                pass

    def nvrx_cupti(k: int) -> None:
        section = NvDetector.detection_section
        for _ in range(k):
            with section("c", profile_cuda=True):
                pass

    plain_model, wrapped_model, nv_model = _Model(), _Model(), _Model()

    def plain_call(k: int) -> None:
        f = plain_model.step
        for _ in range(k):
            f()

    def wrapped_call(k: int) -> None:
        f = wrapped_model.step
        for _ in range(k):
            f()

    def nvrx_wrapped_call(k: int) -> None:
        f = nv_model.step
        for _ in range(k):
            f()

    Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False)
    NvDetector.initialize(report_time_interval=3600, node_name="bench")
    try:
        Detector.wrap_callables([CallableId(wrapped_model, "step")], profile_cuda=False)
        NvDetector.wrap_callables([CallableId_nv(nv_model, "step")], profile_cuda=False)
        variants = {"bare loop": bare, "with nullcontext()": null,
                    LEAN_ROW: lean,
                    "ours: detection_section(profile_cuda=False), context held": ours_held,
                    "ours: detection_section(profile_cuda=False)": ours_host,
                    "ours: detection_section() (no GPU: host timing)": ours_default,
                    "ours: section + generate_report_if_interval_elapsed() (no report due)":
                        ours_step,
                    "NVRx 0.4.1: detection_section(profile_cuda=False)": nvrx_host,
                    "NVRx 0.4.1: detection_section() (CUPTI no-op stand-in)": nvrx_cupti,
                    "plain method call": plain_call,
                    "ours: wrap_callables call": wrapped_call,
                    "NVRx 0.4.1: wrap_callables call": nvrx_wrapped_call}
        result = _interleaved(variants, n, rounds)
    finally:
        Detector.shutdown()
        NvDetector.shutdown()
    return list(result.items())


def CallableId_nv(obj, name):
    from nvidia_resiliency_ext.straggler import CallableId

    return CallableId(obj, name)


def per_op(n_ops: int, rounds: int) -> tuple[float, float, float]:
    """(ns per op without capture, with capture, added ns per op) for tiny CPU torch ops."""
    import logging

    import torch
    from straggler import Detector

    logging.getLogger("straggler").setLevel(logging.ERROR)
    a, b = torch.ones(8, 8), torch.ones(8, 8)

    def ops(k: int) -> None:
        x = a
        for _ in range(k):
            x = torch.add(x, b)

    def in_section(k: int) -> None:
        with Detector.detection_section("ops", profile_cuda=True):
            ops(k)

    samples = {"plain": [], "capture": []}
    for _ in range(rounds):
        Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False)
        try:
            samples["plain"].append(_per_iter_ns(in_section, n_ops))
        finally:
            Detector.shutdown()
        Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False,
                            per_op_capture=True)
        try:
            samples["capture"].append(_per_iter_ns(in_section, n_ops))
        finally:
            Detector.shutdown()
    plain = statistics.median(samples["plain"])
    capture = statistics.median(samples["capture"])
    return plain, capture, capture - plain


# --------------------------------------------------------------------------- DDP step time
def _ddp_worker(rank: int, world_size: int, step_ms: float, steps: int, blocks: int,
                report_s: float) -> dict[str, list[float]]:
    """Alternate blocks of steps with and without the detector; per-block mean step ms."""
    import logging

    import torch
    from straggler import Detector
    from torch.nn.parallel import DistributedDataParallel

    logging.getLogger("straggler").setLevel(logging.ERROR)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = DistributedDataParallel(torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data, target = torch.randn(32, 64), torch.randn(32, 8)

    def step() -> None:
        t_end = time.perf_counter() + step_ms / 1e3
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(data), target).backward()
        opt.step()
        # The rest of the step: the host waits (as it waits for the GPU in real training).
        left = t_end - time.perf_counter()
        if left > 0:
            time.sleep(left)

    Detector.initialize(report_time_interval=report_s, node_name=f"node{rank}", telemetry=False)
    out: dict[str, list[float]] = {"without": [], "with": [], "report_ms": []}
    try:
        for _ in range(3):  # warm-up
            step()
        for block in range(2 * blocks):
            use = block % 2 == 1
            t0 = time.perf_counter()
            for _ in range(steps):
                if use:
                    with Detector.detection_section("step", profile_cuda=False):
                        step()
                    report = Detector.generate_report_if_interval_elapsed()
                    if report is not None:
                        out["report_ms"].append(report.generate_report_elapsed_time)
                else:
                    step()
            out["with" if use else "without"].append((time.perf_counter() - t0) / steps * 1e3)
    finally:
        Detector.shutdown()
    return out


def ddp_overhead(step_ms: float, steps: int, blocks: int, report_s: float
                 ) -> tuple[float, float, float, float, int, float]:
    """Rank 0: ms without, ms with (medians of blocks), overhead %, spread % of the baseline
    blocks, reports made, median report ms."""
    from _multirank import run_ranks

    res = run_ranks(_ddp_worker, 2, step_ms, steps, blocks, report_s, timeout_s=600)[0]
    without = statistics.median(res["without"])
    with_ = statistics.median(res["with"])
    spread = 100 * (max(res["without"]) - min(res["without"])) / without
    reports = res["report_ms"]
    return (without, with_, 100 * (with_ - without) / without, spread, len(reports),
            statistics.median(reports) if reports else float("nan"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Host overhead of the detector")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sections-only", action="store_true",
                        help="print the per-entry table only")
    args = parser.parse_args(argv)
    n, rounds = (20_000, 5) if args.quick else (200_000, 9)
    t_start = time.perf_counter()
    print(f"## Host overhead ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores shared with other jobs, Python {platform.python_version()})\n")
    rows = micro(n, rounds)
    base, lean = dict(rows)["bare loop"], dict(rows)[LEAN_ROW]
    print("| what (per iteration) | ns | ns above bare loop | x lean |")
    print("|---|---|---|---|")
    for name, ns in rows:
        ratio = f"{ns / lean:.2f}" if "section" in name or name == LEAN_ROW else "-"
        print(f"| {name} | {ns:,.0f} | {ns - base:,.0f} | {ratio} |")
    print("\nx lean: ns per iteration over the lean context manager's, same run (target for a "
          "host-only section: at most 1.5).")
    if args.sections_only:
        return 0
    plain, capture, added = per_op(2_000 if args.quick else 20_000, 3 if args.quick else 7)
    print(f"\nPer-op capture (`torch.add` on 8x8 CPU tensors inside a section): {plain:,.0f} ns "
          f"per op without capture, {capture:,.0f} ns with capture: **{added:,.0f} ns per op** "
          "added (host backend; on a GPU the engine records two events per op instead).\n")
    report_s = 5.0
    print(f"CPU DDP loop on 2 gloo ranks (rank 0 shown): blocks of steps alternate without and "
          f"with the detector (step in `detection_section`, "
          f"`generate_report_if_interval_elapsed()` every step, `report_time_interval="
          f"{report_s:g}`); the step is a small MLP forward/backward/all-reduce padded to the "
          "target time with a sleep, as a host waits for its GPU.\n")
    print("| step | without (median of blocks) | with detector | difference | spread of the "
          "baseline blocks | reports in the run (median rank-0 ms) |")
    print("|---|---|---|---|---|---|")
    block_s = 1.5 if args.quick else 3.0
    for step_ms in (10.0, 100.0):
        steps = max(1, int(block_s * 1e3 / step_ms))
        without, with_, pct, spread, n_rep, rep_ms = ddp_overhead(
            step_ms, steps, 2 if args.quick else 4, report_s)
        print(f"| ~{step_ms:g} ms | {without:.3f} ms | {with_:.3f} ms | {pct:+.2f} % | "
              f"{spread:.1f} % | {n_rep} ({rep_ms:.1f} ms) |", flush=True)
    print(f"\n(run took {time.perf_counter() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
