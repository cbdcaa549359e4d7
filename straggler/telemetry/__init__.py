"""Why a rank is slow, measured: NVML sampling and its report window (`nvml`) and the GPU
throughput probe (`probe`).

``straggler.telemetry`` was a module before it was a package; its names (`NvmlTelemetry`,
`TelemetryOptions`, `GpuIdentity`, ...) still resolve here.
"""

from __future__ import annotations

from typing import Any

from .._compat import forward


def __getattr__(name: str) -> Any:
    return forward(__name__, f"{__name__}.nvml", name)
