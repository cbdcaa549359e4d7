"""The simulated NVML (build/sim/libnvidia-ml.so.1): scenario strings and call counters.

tests/conftest.py points ``STRAGGLER_LIBNVML`` here, so every test process that starts an
`NvmlSampler` samples the simulator. What it answers is set per process by
``SIMNVML_SCENARIO`` (see the header of tests/sim/sim_nvml.cpp for the keys), read when NVML
is initialised. A test switches scenarios in its own process with `use_scenario` (no sampler
thread may run meanwhile: the simulator reads the environment only when told to)::

    use_scenario(monkeypatch, scenario(reasons=SW_THERMAL, gpu_temp=91))
"""

from __future__ import annotations

import ctypes
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIBNVML = REPO / "build" / "sim" / "libnvidia-ml.so.1"

# nvmlClocksEventReason bits (nvml.h).
IDLE, SW_POWER_CAP, HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, HW_POWER_BRAKE = (
    0x1, 0x4, 0x8, 0x20, 0x40, 0x80)
# nvmlReturn_t values tests inject.
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_UNKNOWN = 999


def scenario(**values: object) -> str:
    """An inline scenario: ``scenario(sm_clock=900, unsupported="ecc,mem_temp")``."""
    return ";".join(f"{k}={v}" for k, v in values.items())


class SimNvml:
    """Controls of the simulated library loaded in this process."""

    def __init__(self, path: str | Path = LIBNVML) -> None:
        self._lib = ctypes.CDLL(str(path))
        self._lib.simnvml_call_count.restype = ctypes.c_long
        self._lib.simnvml_call_count.argtypes = [ctypes.c_char_p]
        self._lib.simnvml_reload.restype = None

    def calls(self, fn: str) -> int:
        """Calls of NVML entry point ``fn`` since the scenario last changed."""
        return int(self._lib.simnvml_call_count(fn.encode()))

    def reload(self) -> None:
        """Re-read ``SIMNVML_SCENARIO`` (a changed scenario resets the counters)."""
        self._lib.simnvml_reload()


def use_scenario(monkeypatch, spec: str) -> SimNvml:
    """Set ``SIMNVML_SCENARIO`` for this test and make the simulator read it now."""
    monkeypatch.setenv("SIMNVML_SCENARIO", spec)
    sim = SimNvml()
    sim.reload()
    return sim
