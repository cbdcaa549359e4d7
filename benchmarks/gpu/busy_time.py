"""GPU time the detector reports for a section with a host stall: busy time, not wall time.

Each section entry runs a GEMM, a host sleep (5 ms) and a GEMM. For per-op capture off and on,
the table gives, per entry, medians over the entries:
- the host time and the GPU time our detector reports (through its public API:
  ``Detector.generate_report()``'s ``local_section_summaries`` and ``local_kernel_summaries``;
  GPU time per entry = sum over GPU timers of mean x count, over the section's entry count);
- a plain ``torch.cuda.Event`` pair around the same body (stream time: it spans the sleep);
- the GEMM work alone: the same two GEMMs back to back with no sleep, timed by an event pair
  in the same run (the GPU time a section should report).

    python benchmarks/gpu/busy_time.py [--quick] [--size 4096] [--sleep-ms 5]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time

from _common import fmt, guarded, print_header, require_gpu


def gemm_work_ms(a, b, entries: int) -> float:
    """Median event-pair time of two back-to-back GEMMs (the section's GPU work)."""
    import torch

    times = []
    for _ in range(entries):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        a @ b
        a @ b
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    return statistics.median(times)


def detector_run(a, b, per_op: bool, sleep_s: float, entries: int) -> dict[str, float]:
    """Host and GPU time per entry as the detector reports them, and the plain event pair."""
    import torch
    from straggler import Detector, Statistic

    # Every entry GPU-timed (gpu_sample_interval=1): this checks what a GPU sample measures.
    Detector.initialize(report_time_interval=3600, node_name="bench", telemetry=False,
                        per_op_capture=per_op, gpu_sample_interval=1)
    try:
        def entry(pairs: list) -> None:
            with Detector.detection_section("gemm_sleep_gemm"):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                a @ b
                time.sleep(sleep_s)
                a @ b
                e1.record()
            pairs.append((e0, e1))

        for _ in range(3):  # warm-up: timers created, kernels loaded
            entry([])
        torch.cuda.synchronize()
        Detector.generate_report()  # starts a fresh window
        pairs: list = []
        for _ in range(entries):
            entry(pairs)
        torch.cuda.synchronize()
        report = Detector.generate_report()
        if report is None:
            raise RuntimeError("Detector.generate_report() returned None (detector failed?)")
        host = report.local_section_summaries["gemm_sleep_gemm"]
        n_entries = host[Statistic.NUM]
        gpu_total = sum(s[Statistic.AVG] * s[Statistic.NUM]
                        for s in report.local_kernel_summaries.values())
        return {"host_ms": host[Statistic.MED],
                "gpu_ms": gpu_total / n_entries if n_entries else float("nan"),
                "gpu_timers": float(len(report.local_kernel_summaries)),
                "event_ms": statistics.median(e0.elapsed_time(e1) for e0, e1 in pairs)}
    finally:
        Detector.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer entries (seconds)")
    parser.add_argument("--size", type=int, default=4096, help="square bf16 GEMM size")
    parser.add_argument("--sleep-ms", type=float, default=5.0, help="host sleep per entry")
    args = parser.parse_args()
    if args.size < 1 or args.sleep_ms < 0:
        parser.error(f"`size={args.size}` must be positive and `sleep_ms={args.sleep_ms}` "
                     "non-negative")
    require_gpu()
    import torch

    logging.getLogger("straggler").setLevel(logging.WARNING)
    print_header("Busy time vs stream time (benchmarks/gpu/busy_time.py)")
    entries = 10 if args.quick else 50
    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    work = guarded("GEMM work alone", lambda: gemm_work_ms(a, b, entries))
    print(f"Section body: {args.size}x{args.size} bf16 GEMM, {args.sleep_ms:g} ms host sleep, "
          f"GEMM; {entries} entries per row, medians. GEMM work alone (two GEMMs back to back, "
          f"event pair, same run): {fmt(work, '.3f')} ms.\n")
    print("| per-op capture | host ms (detector) | GPU ms per entry (detector) | GPU timers | "
          "plain event pair ms (stream time) | detector GPU / GEMM work | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for per_op in (False, True):
        r = guarded(f"per_op_capture={per_op}",
                    lambda per_op=per_op: detector_run(a, b, per_op, args.sleep_ms / 1e3, entries))
        label = "on" if per_op else "off"
        if r is None:
            print(f"| {label} | error | error | error | error | error | GPU < 0.5 ms |")
            continue
        ratio = r["gpu_ms"] / work if work else None
        print(f"| {label} | {r['host_ms']:.3f} | {r['gpu_ms']:.3f} | {r['gpu_timers']:.0f} | "
              f"{r['event_ms']:.3f} | {fmt(ratio, '.2f')} | GPU < 0.5 ms, host ~ "
              f"{args.sleep_ms:g} ms |", flush=True)
    print("\nBusy time: the detector's GPU time should match the GEMM work (ratio ~1) while "
          "host time and the plain event pair include the sleep.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
