"""The detector on a real GPU, driver and NVML: ranks sharing a GPU, side streams, CUDA graphs,
torch.compile, NVML under load and the health probe.

Run by `make gpu-check` (or ``STRAGGLER_LIBCUDA=libcuda.so.1 STRAGGLER_LIBNVML=libnvidia-ml.so.1
python3 -m pytest -m gpu``); skipped, naming the missing GPU, elsewhere (conftest.py). Each test
takes seconds. Values are checked for plausibility and ordering, never for a speed.
"""

from __future__ import annotations

import logging
import time

import pytest
import torch
import torch.distributed as dist
from straggler import _core

from _multirank import run_ranks

pytestmark = [pytest.mark.gpu, pytest.mark.multirank]  # some tests spawn ranks

N = 2048  # one fp32 GEMM: 17 GFLOP, a fraction of a millisecond on a data-centre GPU


class _Warnings(logging.Handler):
    """The detector's warnings (a fail-open shows up here)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []
        logging.getLogger("straggler").addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _gpu_timer(report, name: str) -> tuple[float, float]:
    from straggler import Statistic

    stats = report.local_kernel_summaries.get(name, {})
    return stats.get(Statistic.NUM, 0.0), stats.get(Statistic.MED, 0.0)


# -- several processes on one GPU ----------------------------------------------------------------
def _shared_gpu_worker(rank: int, world_size: int, slow_rank: int) -> dict:
    from straggler import Detector

    torch.cuda.set_device(rank % torch.cuda.device_count())  # one GPU: all ranks share it
    Detector.initialize(report_time_interval=0, comm_timeout_s=60, telemetry=False,
                        gpu_sample_interval=1)  # every entry GPU-timed
    a = torch.randn(N, N, device="cuda")
    reps = 16 if rank == slow_rank else 8  # the slow rank does twice the GEMMs
    for _ in range(30):
        with Detector.detection_section("gemm"):
            for _ in range(reps):
                torch.mm(a, a)
        torch.cuda.synchronize()
        dist.barrier()  # steps start together, as a collective would make them
    report = Detector.generate_report()
    Detector.shutdown()
    if report is None:
        return {}
    found = report.identify_stragglers(gpu_rel_threshold=0.9)
    return {"gpu": dict(report.gpu_relative_perf_scores),
            "flagged": sorted(s.rank for s in found["straggler_gpus_relative"])}


def test_ranks_sharing_a_gpu_name_the_one_with_twice_the_gemms():
    results = run_ranks(_shared_gpu_worker, 3, 1, timeout_s=150)
    scores = results[0]["gpu"]
    # Time-sliced, each rank's GEMMs wait for the others': a healthy rank's section spans about
    # three ranks' work, the slow one's four (0.75); busy time gives 0.5. Either is below 0.9.
    assert min(scores, key=scores.get) == 1 and scores[1] < 0.9, scores
    assert results[0]["flagged"] == [1], results[0]


# -- one process: side streams, graph capture, torch.compile -------------------------------------
def _side_stream_worker(rank: int, world_size: int) -> dict:
    from straggler import Detector

    warnings = _Warnings()
    Detector.initialize(report_time_interval=0, telemetry=False, gpu_sample_interval=1)
    a = torch.randn(N, N, device="cuda")
    side = torch.cuda.Stream()
    for _ in range(5):
        # The section times the stream current at its entry.
        with torch.cuda.stream(side), Detector.detection_section("side"):
            for _ in range(4):
                torch.mm(a, a)
        with Detector.detection_section("default"):  # meanwhile on the default stream
            for _ in range(2):
                torch.mm(a, a)
    torch.cuda.synchronize()
    report = Detector.generate_report()
    Detector.shutdown()
    return {"side": _gpu_timer(report, "side"), "default": _gpu_timer(report, "default"),
            "warnings": warnings.lines}


def test_sections_on_side_streams_are_timed():
    (r,) = run_ranks(_side_stream_worker, 1, timeout_s=120)
    assert r["warnings"] == []
    assert r["side"][0] == 5 and r["side"][1] > 0, r
    assert r["default"][0] == 5 and r["default"][1] > 0, r


def _graph_worker(rank: int, world_size: int) -> dict:
    from straggler import Detector

    warnings = _Warnings()
    Detector.initialize(report_time_interval=0, telemetry=False, gpu_sample_interval=1)
    static = torch.randn(N, N, device="cuda")
    warm = torch.cuda.Stream()  # warm-up on a side stream, as torch.cuda.graphs asks
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            with Detector.detection_section("graphed"):
                out = torch.mm(static, static)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    # Entered during capture: host-timed only, no event recorded.
    with torch.cuda.graph(graph), Detector.detection_section("graphed"):
        out = torch.mm(static, static)
    for _ in range(5):
        graph.replay()
    torch.cuda.synchronize()
    report = Detector.generate_report()
    Detector.shutdown()
    return {"gpu": _gpu_timer(report, "graphed"), "finite": bool(torch.isfinite(out).all()),
            "warnings": warnings.lines}


def test_sections_inside_cuda_graph_capture_are_untimed_and_harmless():
    (r,) = run_ranks(_graph_worker, 1, timeout_s=120)
    assert r["warnings"] == []  # no fail-open: the detector is still on
    assert r["gpu"][0] == 3, r  # the three warm-up entries; the captured one is not timed
    assert r["finite"]


def _compiled_worker(rank: int, world_size: int) -> dict:
    from straggler import Detector

    warnings = _Warnings()
    Detector.initialize(report_time_interval=0, telemetry=False, gpu_sample_interval=1)

    @torch.compile
    def block(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ x) + 1.0

    a = torch.randn(N, N, device="cuda")
    block(a)  # compiled here, outside the sections
    for _ in range(5):
        torch.cuda.synchronize()  # each entry starts on an idle GPU: its ops must be reported
        with Detector.detection_section("compiled"):
            block(a)
    torch.cuda.synchronize()
    report = Detector.generate_report()
    Detector.shutdown()
    return {"gpu": _gpu_timer(report, "compiled"), "warnings": warnings.lines}


def test_a_compiled_region_inside_a_section_has_its_gpu_time_recorded():
    """Every entry has a GPU sample. Dynamo wraps the compiled graph in a FUNCTION-scope record
    ("Torch-Compiled Region: 0/0") that is not an operator: the observer sees through it and
    reports the graph's aten ops (inductor's extern mm); the Triton kernels after the last one
    count because the GPU is still busy with the GEMM at stop. (It was taken for the outermost
    op, so nothing was reported, and an entry that began on an idle GPU had no sample; the
    worker synchronizes before each entry so that every entry starts idle.)"""
    (r,) = run_ranks(_compiled_worker, 1, timeout_s=240)  # the first compile takes seconds
    assert r["warnings"] == []
    assert r["gpu"][0] == 5 and r["gpu"][1] > 0, r


# -- NVML and the probe --------------------------------------------------------------------------
def test_nvml_sampler_under_a_gemm_loop_shows_the_load():
    from straggler.telemetry.window import RAW_FIELDS

    device = torch.cuda.current_device()
    sampler = _core.NvmlSampler(_core.cuda_device_pci_bus_id(device), period_s=0.05)
    time.sleep(1.0)  # NVML's power reading is a ~1 s average: let earlier tests' load fade
    assert sampler.sample_now(), sampler.error
    idle = dict(zip(RAW_FIELDS, sampler.drain()[1][-1], strict=True))
    a = torch.randn(8192, 8192, device="cuda")
    sampler.start()
    try:
        end = time.monotonic() + 2.5  # longer than NVML's utilization and power windows
        while time.monotonic() < end:
            for _ in range(10):
                torch.mm(a, a)
            torch.cuda.synchronize()
    finally:
        sampler.stop()
    rows = [dict(zip(RAW_FIELDS, v, strict=True)) for v in sampler.drain()[1]]
    late = rows[len(rows) // 2:]  # the second half: the windows cover only the loop
    assert len(late) >= 5, len(rows)
    assert max(r["sm_clock_mhz"] for r in late) > 0
    assert max(r["gpu_util_pct"] for r in late) > 50, [r["gpu_util_pct"] for r in late]
    if idle["power_w"] == idle["power_w"]:  # NaN where the board does not report power
        assert max(r["power_w"] for r in late) > idle["power_w"], (idle["power_w"], late)


def _probe_worker(rank: int, world_size: int) -> dict:
    from straggler import Detector

    Detector.initialize(report_time_interval=0, telemetry=False, gpu_sample_interval=1)
    probe = Detector.run_probe()[0]
    Detector.shutdown()
    # The same board's FP32 GEMM throughput (TF32 off, as torch's default for matmul).
    a = torch.randn(4096, 4096, device="cuda")
    for _ in range(3):
        torch.mm(a, a)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        torch.mm(a, a)
    stop.record()
    stop.synchronize()
    gemm_tflops = 10 * 2 * 4096**3 / (start.elapsed_time(stop) * 1e9)
    return {"tflops": probe.compute_tflops, "gbps": probe.memory_gbps, "gemm": gemm_tflops}


def test_probe_throughput_is_plausible_for_the_board():
    (r,) = run_ranks(_probe_worker, 1, timeout_s=120)
    # The probe's FP32 FMA loop and cuBLAS's FP32 GEMM both run near the board's FP32 peak; a
    # factor of 5 either way leaves room for either being far from it, not for a broken probe
    # (a wrong FLOP count or clock is off by orders of magnitude).
    assert r["gemm"] / 5 < r["tflops"] < r["gemm"] * 5, r
    assert r["gbps"] > 50, r  # any data-centre GPU's memory moves hundreds of GB/s or more
