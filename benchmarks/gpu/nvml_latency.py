"""NVML call latency on a real GPU. H100 results: see README.md.

For each NVML getter our sampler relies on, µs per call (median of repeated timed batches,
through ``nvidia-ml-py``'s ctypes binding, so the figures include a few hundred ns of Python),
plus NVML's own ``latencyUsec`` for field-value queries and the cost of one
``straggler.telemetry.nvml.NvmlTelemetry.sample()`` (one report's reduction of the background
samples). The literature has one hard figure (~0.36 ms per GetPowerUsage on a K40m) and none for
H100/H200.

    python benchmarks/gpu/nvml_latency.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from _common import machine, require_gpu


def _us_per_call(fn, calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    require_gpu()
    import pynvml as n

    calls, rounds = (50, 3) if args.quick else (500, 7)
    n.nvmlInit()
    h = n.nvmlDeviceGetHandleByIndex(0)
    getters = {
        "GetClockInfo(SM)": lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM),
        "GetTemperature(GPU)": lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU),
        "GetPowerUsage": lambda: n.nvmlDeviceGetPowerUsage(h),
        "GetEnforcedPowerLimit": lambda: n.nvmlDeviceGetEnforcedPowerLimit(h),
        "GetCurrentClocksEventReasons": lambda: n.nvmlDeviceGetCurrentClocksEventReasons(h),
        "GetViolationStatus(POWER)": lambda: n.nvmlDeviceGetViolationStatus(
            h, n.NVML_PERF_POLICY_POWER),
        "GetUtilizationRates": lambda: n.nvmlDeviceGetUtilizationRates(h),
        "GetMemoryInfo": lambda: n.nvmlDeviceGetMemoryInfo(h),
        "GetPcieThroughput(TX)": lambda: n.nvmlDeviceGetPcieThroughput(
            h, n.NVML_PCIE_UTIL_TX_BYTES),
        "GetCurrPcieLinkWidth": lambda: n.nvmlDeviceGetCurrPcieLinkWidth(h),
    }
    print(f"## NVML call latency ({machine()})\n")
    print("| NVML call | µs per call (median) |")
    print("|---|---|")
    for name, fn in getters.items():
        try:
            print(f"| {name} | {_us_per_call(fn, calls, rounds):,.1f} |", flush=True)
        except n.NVMLError as exc:
            print(f"| {name} | not supported: {exc} |")
    try:
        ids = [n.NVML_FI_DEV_POWER_INSTANT, n.NVML_FI_DEV_POWER_AVERAGE]
        values = n.nvmlDeviceGetFieldValues(h, ids)
        lat = ", ".join(f"{v.latencyUsec} µs" for v in values)
        print(f"\nNVML's own latencyUsec for POWER_INSTANT, POWER_AVERAGE field values: {lat}")
    except (n.NVMLError, AttributeError) as exc:
        print(f"\nField values not available: {exc}")
    from straggler.telemetry.nvml import NvmlTelemetry

    tel = NvmlTelemetry(device=0)
    time.sleep(2.0)  # let the background sampler collect a window
    t0 = time.perf_counter_ns()
    tel.sample()
    print(f"\nOne NvmlTelemetry.sample() (reduce ~2 s of background samples): "
          f"{(time.perf_counter_ns() - t0) / 1e3:,.0f} µs; sampler status: {tel.status}")
    tel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
