"""Shared helpers of the GPU benchmarks: the machine line, guarded rows, NVRx, timing loops."""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(_REPO))
sys.path.insert(0, str(_REPO / "benchmarks"))

from _lean import LeanSection  # noqa: E402,F401  (re-exported for the scripts)

NVRX_MODULE = "nvidia_resiliency_ext.attribution.straggler"


def require_gpu() -> None:
    """Exit with a message when there is no CUDA device."""
    import torch

    if not torch.cuda.is_available():
        sys.exit("this benchmark needs an NVIDIA GPU and a CUDA build of torch "
                 f"(torch {torch.__version__}: torch.cuda.is_available() is False)")


def machine() -> str:
    """One line naming the GPU, driver, CUDA and torch versions, Python and the CPU."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    driver = "unknown"
    try:
        import pynvml

        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        driver = driver.decode() if isinstance(driver, bytes) else driver
    except Exception:  # noqa: BLE001 - the line is informative only
        pass
    return (f"GPU {props.name}, driver {driver}, CUDA {torch.version.cuda}, torch "
            f"{torch.__version__}, Python {platform.python_version()}, "
            f"{platform.machine()} x{os.cpu_count()} CPUs")


def print_header(title: str) -> None:
    """The script's title and the machine line (every script prints both first)."""
    print(f"# {title}\n\n{machine()}\n", flush=True)


def guarded(what: str, fn: Callable[[], Any], default: Any = None) -> Any:
    """`fn()`, or `default` after printing one error line naming `what` (the rest still runs)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a benchmark part failing must not stop the others
        print(f"\n**error in {what}**: `{type(exc).__name__}: {exc}`\n", flush=True)
        traceback.print_exc(limit=3, file=sys.stderr)
        return default


def import_nvrx() -> Any:
    """NVRx 0.5+'s straggler module, or None (with the reason) when it cannot be imported.

    Its CUPTI extension needs libcupti.so.13 on LD_LIBRARY_PATH (torch's
    site-packages/nvidia/cu13/lib); see benchmarks/gpu/README.md.
    """
    import importlib

    try:
        return importlib.import_module(NVRX_MODULE)
    except Exception as exc:  # noqa: BLE001 - optional comparison
        print(f"NVRx: not installed ({NVRX_MODULE}: {type(exc).__name__}: {exc})\n", flush=True)
        return None


def interleaved_ns(variants: dict[str, Callable[[int], None]], n: int, rounds: int
                   ) -> dict[str, float]:
    """Median over ``rounds`` of ns per iteration of each ``body(n)``, variants in turn.

    A variant that raises is reported once and left out of the following rounds.
    """
    samples: dict[str, list[float]] = {k: [] for k in variants}
    live = dict(variants)
    for _ in range(rounds):
        for name, body in list(live.items()):
            t0 = time.perf_counter_ns()
            try:
                body(n)
            except Exception as exc:  # noqa: BLE001
                print(f"\n**error in {name}**: `{type(exc).__name__}: {exc}`\n", flush=True)
                del live[name]
                continue
            samples[name].append((time.perf_counter_ns() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items() if v}


def fmt(value: float | None, spec: str = ",.0f") -> str:
    """A table cell: the number, or 'error' when it is missing."""
    return "error" if value is None else format(value, spec)
