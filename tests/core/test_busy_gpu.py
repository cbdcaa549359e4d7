"""Busy time on a real GPU: host stalls, collectives and idle streams are not GPU time.

Runs only with a real driver and a CUDA torch:
``STRAGGLER_LIBCUDA=libcuda.so.1 .venv/bin/python -m pytest -m gpu tests/core/test_busy_gpu.py``.
The simulated-driver twins are tests/core/test_engine_busy.py and tests/timing/test_capture.py.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sim.simcuda import LIBCUDA

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.multirank,  # one test spawns ranks
    pytest.mark.skipif(Path(os.environ["STRAGGLER_LIBCUDA"]).resolve() == LIBCUDA.resolve()
                       or not torch.cuda.is_available(),
                       reason="needs a real CUDA driver (STRAGGLER_LIBCUDA) and a CUDA torch"),
]


@pytest.fixture(params=[False, True], ids=["sections", "per_op"])
def detector(request):
    from straggler import Detector

    Detector.shutdown()
    Detector.initialize(per_op_capture=request.param, report_time_interval=0,
                        gpu_sample_interval=1)  # every entry GPU-timed: 5 samples
    yield Detector
    Detector.shutdown()


def _gemm_sleep_gemm(a):
    a @ a
    time.sleep(0.005)
    a @ a


def test_host_stall_is_not_gpu_time(detector):
    a = torch.randn(256, 256, device="cuda")
    a @ a  # warm-up: the process's first GEMM initialises cuBLAS (~100 ms) inside the op
    torch.cuda.synchronize()
    for _ in range(5):
        with detector.detection_section("step"):
            _gemm_sleep_gemm(a)
    torch.cuda.synchronize()
    core = detector.core()
    core.engine.flush()
    busy = core.engine.durations("step")
    assert len(busy) == 5
    assert max(busy) < 0.5, busy  # two small GEMMs, not the 5 ms sleep
    host = [ns * 1e-6 for ns in core.sections["step"].samples]  # ms
    assert min(host) >= 5.0


def test_cpu_model_on_a_cuda_host_gives_no_gpu_score(detector):
    lin = torch.nn.Linear(64, 64)  # on the CPU
    for _ in range(5):
        with detector.detection_section("step"):
            lin(torch.randn(8, 64)).sum().backward()
    report = detector.generate_report()
    assert "step" in report.local_section_summaries
    assert "step" not in report.local_kernel_summaries
    assert detector.core().gpu.idle_entries.get("step", 0) >= 1 or \
        not detector.core().options.per_op_capture


def test_collectives_are_never_timed(tmp_path):
    import torch.distributed as dist
    from straggler import Detector

    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0,
                            world_size=1)
    try:
        Detector.initialize(per_op_capture=True, report_time_interval=0)
        a = torch.randn(512, 512, device="cuda")
        for _ in range(3):
            with Detector.detection_section("step"):
                b = a @ a
                dist.all_reduce(b)  # gloo on a CUDA tensor: copies through the host
                b @ b
        report = Detector.generate_report()
        names = list(report.local_kernel_summaries)
        assert any(n.startswith(("aten.mm", "aten.matmul")) for n in names), names
        assert not any("c10d" in n or "allreduce" in n.lower() for n in names), names
    finally:
        Detector.shutdown()
        dist.destroy_process_group()


def test_host_side_straggler_gets_host_side_cause():
    """Two ranks of equal GPU work; rank 1 stalls on the host inside its section."""
    from _multirank import run_ranks

    causes = run_ranks(_host_side_worker, 2, timeout_s=120)
    assert causes[0].get(1) == "host_side", causes[0]


def _host_side_worker(rank, world_size):
    from straggler import Detector

    Detector.initialize(report_time_interval=0, gpu_sample_interval=1)
    a = torch.randn(1024, 1024, device="cuda")
    report = None
    for _ in range(3):
        for _ in range(10):
            with Detector.detection_section("step"):
                for _ in range(4):
                    a = (a @ a) / 1024
                if rank == 1:
                    time.sleep(0.02)
            torch.cuda.synchronize()
        report = Detector.generate_report()
    Detector.shutdown()
    return {r: d.cause.value for r, d in (report.causes or {}).items()} if rank == 0 else {}
