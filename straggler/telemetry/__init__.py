"""Why a rank is slow, measured: NVML sampling (`nvml`), its report window (`window`), the
options (`options`), the GPU throughput probe (`probe`) and this process's device (`device`).

``straggler.telemetry`` was a module before it was a package; its names (`NvmlTelemetry`,
`TelemetryOptions`, `GpuIdentity`, `FIELDS`, ...) still resolve here
(`straggler._compat.MOVED_NAMES`).
"""

from __future__ import annotations

from typing import Any

from .._compat import forward


def __getattr__(name: str) -> Any:
    return forward(__name__, name)
