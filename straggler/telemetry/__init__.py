"""Why a rank is slow, measured: NVML sampling (`nvml`), its report window (`window`), the
options (`options`), the GPU throughput probe (`probe`) and this process's device (`device`).

The names below are the sub-package's API. The probe imports torch: it is imported by its
module path (`straggler.telemetry.probe`) when it runs.
"""

from __future__ import annotations

from .device import current_cuda_device
from .nvml import DEFAULT_PERIOD_S, GpuIdentity, NvmlTelemetry
from .options import TelemetryOptions
from .window import FIELDS, RAW_FIELDS, REASONS, WindowAggregator, aggregate_window

__all__ = ["TelemetryOptions", "NvmlTelemetry", "GpuIdentity",
           "DEFAULT_PERIOD_S", "FIELDS", "RAW_FIELDS", "REASONS", "WindowAggregator",
           "aggregate_window", "current_cuda_device"]
