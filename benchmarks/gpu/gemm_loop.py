"""Step-time overhead on a GEMM-heavy loop. H100 results: see README.md.

A loop of bf16 matmuls (sized for ~10 ms and ~100 ms steps) runs in blocks that take turns:
no detector; the step in ``detection_section(profile_cuda=False)`` (host timing); in
``detection_section()`` (GPU timing with events); and with ``per_op_capture=True`` (every
matmul timed). ``generate_report_if_interval_elapsed()`` is called every step in the detector
variants. Each block ends with ``torch.cuda.synchronize()``; the table gives the median block
time per step and the difference to the no-detector blocks.

    python benchmarks/gpu/gemm_loop.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time

from _common import machine, require_gpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    require_gpu()
    import torch
    from straggler import Detector

    rounds = 3 if args.quick else 9
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def calibrate(target_ms: float) -> int:
        for _ in range(3):
            a @ b
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()
        per = (time.perf_counter() - t0) / 20 * 1e3
        return max(1, round(target_ms / per))

    def block(mm: int, steps: int, mode: str) -> float:
        section = (contextlib.nullcontext if mode == "none"
                   else lambda: Detector.detection_section(
                       "step", profile_cuda=mode != "host"))
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            with section():
                for _ in range(mm):
                    a @ b
            if mode != "none":
                Detector.generate_report_if_interval_elapsed()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / steps * 1e3

    print(f"## GEMM loop overhead ({machine()})\n")
    print("| step | variant | ms per step (median of blocks) | vs no detector |")
    print("|---|---|---|---|")
    for target in (10.0, 100.0):
        mm = calibrate(target)
        # ~2 s per block; --quick: ~0.6 s (the script in ~25 s on an H100).
        steps = max(5, int((600 if args.quick else 2000) / target))
        times: dict[str, list[float]] = {"none": [], "host": [], "gpu": [], "per-op": []}
        for _ in range(rounds):
            for mode in ("none", "host", "gpu"):
                Detector.initialize(report_time_interval=10, node_name="bench", telemetry=False)
                try:
                    times[mode].append(block(mm, steps, mode))
                finally:
                    Detector.shutdown()
            Detector.initialize(report_time_interval=10, node_name="bench", telemetry=False,
                                per_op_capture=True)
            try:
                times["per-op"].append(block(mm, steps, "gpu"))
            finally:
                Detector.shutdown()
        base = statistics.median(times["none"])
        for mode, label in (("none", "no detector"), ("host", "section, host timing"),
                            ("gpu", "section, GPU events (1 entry in 10)"),
                            ("per-op", "per-op capture")):
            t = statistics.median(times[mode])
            print(f"| ~{target:g} ms ({mm} matmuls 8192² bf16) | {label} | {t:.3f} | "
                  f"{100 * (t - base) / base:+.2f} % |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
