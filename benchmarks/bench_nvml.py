"""NVML sampler cost: one sample (all fields), one report's reduction, and the effect of the
background sampler on a training loop's step time.

Runs against the simulated NVML (build/sim/libnvidia-ml.so.1, `make sim`) and the simulated CUDA
driver unless STRAGGLER_LIBNVML / STRAGGLER_LIBCUDA are set. The simulator answers in well under
a microsecond, so "latency 0" rows show our own cost (binding, locks, the row buffer); rows with
an emulated per-call latency (the simulator spins that long in every NVML call) show how the
cost grows with what a real driver charges per call. On a GPU machine run with
STRAGGLER_LIBNVML=libnvidia-ml.so.1 STRAGGLER_LIBCUDA=libcuda.so.1 for real figures.

    .venv/bin/python benchmarks/bench_nvml.py [--samples 2000] [--repeats 7] [--steps 100]
        [--rounds 12]

Prints markdown tables. Sample rows: best of ``repeats`` runs, variants taking turns. Loop rows:
median step time per block, median over ``rounds`` blocks, configurations taking turns.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("STRAGGLER_LIBCUDA", str(REPO / "build" / "sim" / "libcuda.so.1"))
os.environ.setdefault("STRAGGLER_LIBNVML", str(REPO / "build" / "sim" / "libnvidia-ml.so.1"))
os.environ["SIMNVML_SCENARIO"] = ""
SIMULATED = Path(os.environ["STRAGGLER_LIBNVML"]).name == "libnvidia-ml.so.1" and \
    "build/sim" in os.environ["STRAGGLER_LIBNVML"]

import numpy as np  # noqa: E402
import torch  # noqa: E402
from straggler import _core  # noqa: E402
from straggler.telemetry.nvml import DEFAULT_PERIOD_S  # noqa: E402
from straggler.telemetry.window import WindowAggregator  # noqa: E402

NVML_FUNCTIONS = (  # what one sample may call (sim counters)
    "nvmlDeviceGetClockInfo", "nvmlDeviceGetTemperatureV", "nvmlDeviceGetTemperature",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetPowerUsage",
    "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetFieldValues",
    "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetViolationStatus",
    "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetTotalEccErrors")


def _sim():
    sys.path.insert(0, str(REPO / "tests"))
    from sim.simnvml import SimNvml

    return SimNvml(os.environ["STRAGGLER_LIBNVML"])


def set_latency(us: float) -> None:
    """Emulated NVML cost per call (simulator only); call with no sampler thread running."""
    if SIMULATED:
        os.environ["SIMNVML_SCENARIO"] = f"call_latency_us={us}" if us else ""
        _sim().reload()


def calls_per_sample(sampler) -> int:
    if not SIMULATED:
        return -1
    sim = _sim()
    before = sum(sim.calls(f) for f in NVML_FUNCTIONS)
    sampler.sample_now()
    return sum(sim.calls(f) for f in NVML_FUNCTIONS) - before


def sample_costs(bus: str, samples: int, repeats: int) -> list[tuple[str, float]]:
    """ns per operation, best of `repeats`, variants taking turns."""
    sampler = _core.NvmlSampler(bus, period_s=3600.0, capacity=samples + 1)
    agg = WindowAggregator()
    for _ in range(60):
        sampler.sample_now()
    t60, v60, _ = sampler.drain()

    def floor(n):
        for _ in range(n):
            sampler.samples_taken  # noqa: B018 - one trivial call into the extension

    def one_sample(n):
        for _ in range(n):
            sampler.sample_now()
        sampler.drain()

    def reduce_window(n):
        for _ in range(n // 100 or 1):
            agg(t60, v60)

    variants = {"call into the extension (baseline)": (floor, samples),
                "one sample, all fields, simulator latency 0": (one_sample, samples),
                "reduce a 60-sample window to the report vector": (reduce_window, samples)}
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(repeats):
        for name, (body, n) in variants.items():
            count = n if name != "reduce a 60-sample window to the report vector" else \
                (n // 100 or 1)
            t0 = time.perf_counter_ns()
            body(n)
            best[name] = min(best[name], (time.perf_counter_ns() - t0) / count)
    rows = list(best.items())
    if SIMULATED:
        for us in (5.0, 50.0):
            set_latency(us)
            n = max(samples // 20, 20)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter_ns()
                one_sample(n)
                times.append((time.perf_counter_ns() - t0) / n)
            rows.append((f"one sample, emulated NVML latency {us:g} us per call", min(times)))
        set_latency(0)
    return rows


def training_loop(steps: int, a: torch.Tensor, b: torch.Tensor) -> list[float]:
    """A CPU stand-in for a training step: matmuls on the training thread; step times in ms."""
    out = []
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        c = a
        for _ in range(4):
            c = torch.tanh(c @ b)
        float(c[0, 0])
        out.append((time.perf_counter_ns() - t0) / 1e6)
    return out


def loop_effect(bus: str, steps: int, rounds: int) -> list[tuple[str, float, float, float]]:
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(384, 384, generator=g), torch.randn(384, 384, generator=g) / 20
    training_loop(20, a, b)  # warm-up
    # The second "off" row is an A/A control: its distance from 1.000 is the noise floor.
    configs = [("sampler off (baseline)", None, 0.0),
               ("sampler off again (A/A control: the noise floor)", None, 0.0),
               (f"sampler on, default period {DEFAULT_PERIOD_S:g} s", DEFAULT_PERIOD_S, 0.0)]
    if SIMULATED:
        configs += [(f"sampler on, {DEFAULT_PERIOD_S:g} s, emulated 100 us per NVML call",
                     DEFAULT_PERIOD_S, 100.0),
                    ("stress: period 0.01 s, emulated 100 us per NVML call", 0.01, 100.0)]
    medians: dict[str, list[float]] = {c[0]: [] for c in configs}
    samples: dict[str, int] = dict.fromkeys(medians, 0)
    for _ in range(rounds):
        for name, period, latency in configs:
            set_latency(latency)
            sampler = None
            if period is not None:
                sampler = _core.NvmlSampler(bus, period_s=period)
                sampler.start()
            times = training_loop(steps, a, b)
            if sampler is not None:
                sampler.stop()
                samples[name] += sampler.samples_taken
            medians[name].append(statistics.median(times))
    set_latency(0)
    base = statistics.median(medians[configs[0][0]])
    return [(name, statistics.median(m), statistics.median(m) / base, samples[name] / rounds)
            for name, m in medians.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()

    ok, why = _core.nvml_status()
    if not ok:
        sys.exit(f"NVML unavailable: {why}")
    bus = _core.cuda_device_pci_bus_id(0)
    probe = _core.NvmlSampler(bus)
    print(f"NVML: {os.environ['STRAGGLER_LIBNVML']} ({'simulated' if SIMULATED else 'real'}); "
          f"GPU {probe.identity['name']} at {bus}")
    print(f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print(f"NVML calls per sample: {calls_per_sample(probe)}\n")

    rows = sample_costs(bus, args.samples, args.repeats)
    base = rows[0][1]
    print("| operation | us | x baseline |\n|---|---:|---:|")
    for name, ns in rows:
        print(f"| {name} | {ns / 1e3:.2f} | {ns / base:.1f} |")

    print(f"\nTraining loop ({args.steps} steps per block, {args.rounds} blocks per "
          "configuration, taking turns):\n")
    print("| configuration | median step ms | x baseline | samples per block |")
    print("|---|---:|---:|---:|")
    for name, ms, ratio, n in loop_effect(bus, args.steps, args.rounds):
        print(f"| {name} | {ms:.3f} | {ratio:.3f} | {n:.0f} |")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
