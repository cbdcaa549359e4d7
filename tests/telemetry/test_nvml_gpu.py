"""NVML sampler and health probe on a real GPU, driver and NVML.

Runs only where both real libraries are used:
``STRAGGLER_LIBCUDA=libcuda.so.1 STRAGGLER_LIBNVML=libnvidia-ml.so.1 .venv/bin/python -m pytest
-m gpu tests/telemetry/test_nvml_gpu.py``. Everywhere else the simulated libraries cover the same
code.
Values are checked for plausibility only (units, ranges, consistency with the CUDA driver);
no test asserts a speed.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from straggler import _core
from straggler.telemetry.nvml import NvmlTelemetry
from straggler.telemetry.window import FIELDS, RAW_FIELDS

from sim.simcuda import LIBCUDA
from sim.simnvml import LIBNVML


def _real(var: str, sim: Path) -> bool:
    return Path(os.environ[var]).resolve() != sim.resolve()


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not (_real("STRAGGLER_LIBCUDA", LIBCUDA)
                            and _real("STRAGGLER_LIBNVML", LIBNVML)),
                       reason="needs a real CUDA driver and NVML (STRAGGLER_LIBCUDA, "
                              "STRAGGLER_LIBNVML)"),
]


def test_real_sample_is_plausible_and_names_the_cuda_device():
    ok, why = _core.nvml_status()
    assert ok, why
    bus = _core.cuda_device_pci_bus_id(0)
    s = _core.NvmlSampler(bus)
    assert s.sample_now(), s.error
    row = dict(zip(RAW_FIELDS, s.drain()[1][0], strict=True))
    ident = s.identity
    assert ident["uuid"].startswith(("GPU-", "MIG-")) and ident["driver_version"]
    assert ident["pci_bus_id"] == bus
    assert 0 < row["sm_clock_mhz"] <= row["sm_clock_max_mhz"] + 1
    assert 0 < row["mem_clock_mhz"] <= row["mem_clock_max_mhz"] + 1
    assert 0 <= row["gpu_temp_c"] < 130
    for name in ("power_w", "power_limit_w"):  # not on every board (e.g. some MIG slices)
        assert math.isnan(row[name]) or 0 < row[name] < 5000, (name, row[name])
    assert math.isnan(row["pcie_gen"]) or 1 <= row["pcie_gen"] <= row["pcie_gen_max"]
    assert s.error == ""


def test_real_window_vector_and_probe():
    tel = NvmlTelemetry(device=0, period_s=0.05)
    try:
        probe = _core.run_probe(0)
        vec = dict(zip(FIELDS, tel.sample(), strict=True))
    finally:
        tel.close()
    assert vec["nvml_samples"] >= 1
    assert probe["compute_ms"] > 0 and probe["memory_ms"] > 0
    tflops = probe["compute_gflop"] / probe["compute_ms"]
    gbps = probe["memory_gbyte"] / probe["memory_ms"] * 1e3
    # Any CUDA GPU of this decade does more than 0.1 TFLOP/s FP32 and 10 GB/s.
    assert tflops > 0.1 and gbps > 10, (tflops, gbps)
