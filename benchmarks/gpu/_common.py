"""Shared helpers of the GPU benchmarks (NOT YET RUN: see README.md)."""

from __future__ import annotations

import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def require_gpu() -> None:
    """Exit with a message when there is no CUDA device."""
    import torch

    if not torch.cuda.is_available():
        sys.exit("this benchmark needs an NVIDIA GPU (torch.cuda.is_available() is False)")


def machine() -> str:
    """One line naming the GPU, driver, CUDA and torch versions."""
    import torch

    props = torch.cuda.get_device_properties(0)
    driver = "unknown"
    try:
        import pynvml

        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
    except Exception:  # noqa: BLE001 - the line is informative only
        pass
    return (f"{props.name}, driver {driver}, CUDA {torch.version.cuda}, torch "
            f"{torch.__version__}, {platform.processor() or platform.machine()}")


def interleaved_ns(variants: dict[str, Callable[[int], None]], n: int, rounds: int
                   ) -> dict[str, float]:
    """Median over ``rounds`` of ns per iteration of each ``body(n)``, variants in turn."""
    samples: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(rounds):
        for name, body in variants.items():
            t0 = time.perf_counter_ns()
            body(n)
            samples[name].append((time.perf_counter_ns() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}
