"""The GPU health probe: its PTX (committed vs nvcc), its driver calls through the simulated
driver, and the group arithmetic. The multi-rank ordering test is in test_causes_multirank.py.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from straggler import _core
from straggler.telemetry.probe import ProbeResult, probe_group, relative_to_group

REPO = Path(__file__).resolve().parents[2]
CU = REPO / "csrc" / "telemetry" / "probe_kernel.cu"
PTX = REPO / "csrc" / "telemetry" / "probe_kernel.ptx"
CUDA_ERROR_INVALID_PTX = 218


def _nvcc() -> str | None:
    found = shutil.which("nvcc")
    for candidate in (found, "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _code(ptx: str) -> str:
    """PTX without comments and blank lines: what the driver compiles."""
    lines = (re.sub(r"//.*", "", line).rstrip() for line in ptx.splitlines())
    return "\n".join(line for line in lines if line.strip())


def _release(ptx: str) -> str:
    m = re.search(r"Cuda compilation tools, release ([0-9.]+), (V[0-9.]+)", ptx)
    return m.group(2) if m else ""


def _lowered(ptx: str) -> str:
    """What cmake/probe_ptx.cmake does to nvcc's output."""
    return re.sub(r"\n\.version [0-9]+\.[0-9]+\n", "\n.version 6.3\n", ptx)


def _signatures(ptx: str) -> list[str]:
    """Entry points with their parameters, and module-scope variables."""
    code = _code(ptx)
    entries = re.findall(r"\.visible \.entry (\w+)\(\s*([^)]*)\)", code)
    globals_ = re.findall(r"^\.global [^;]+;", code, flags=re.M)
    return [f"{name}({' '.join(params.split())})" for name, params in entries] + globals_


@pytest.mark.skipif(_nvcc() is None, reason="CUDA toolkit (nvcc) not installed: the build "
                    "embeds the committed PTX, there is no fresh compile to compare with")
def test_committed_ptx_agrees_with_a_fresh_nvcc_compile(tmp_path):
    nvcc = _nvcc()
    out = tmp_path / "probe.ptx"
    subprocess.run([nvcc, "-ptx", "-arch=compute_75", "-o", str(out), str(CU)], check=True,
                   capture_output=True, timeout=300)
    fresh, committed = _lowered(out.read_text()), PTX.read_text()
    assert _signatures(fresh) == _signatures(committed)
    if _release(fresh) == _release(committed):
        # Same compiler release: the same PTX, instruction for instruction.
        assert _code(fresh) == _code(committed)


def test_committed_ptx_is_valid_ptx_6_3_for_sm_75(tmp_path):
    committed = PTX.read_text()
    assert "\n.version 6.3\n" in committed and "\n.target sm_75\n" in committed
    assert [s.split("(")[0] for s in _signatures(committed)[:2]] == [
        "straggler_probe_compute", "straggler_probe_memory"]
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not Path(ptxas).exists():
        pytest.skip("no ptxas (CUDA toolkit) here to assemble the PTX")
    subprocess.run([ptxas, "-arch=sm_75", "-o", str(tmp_path / "probe.cubin"), str(PTX)],
                   check=True, capture_output=True, timeout=300)


def test_the_extension_embeds_the_probe_ptx():
    embedded = _core.PROBE_PTX
    assert _core.PROBE_PTX_ORIGIN in ("nvcc", "committed")
    assert "\n.version 6.3\n" in embedded
    assert _signatures(embedded) == _signatures(PTX.read_text())
    if _core.PROBE_PTX_ORIGIN == "committed" or _release(embedded) == _release(PTX.read_text()):
        assert _code(embedded) == _code(PTX.read_text())


def test_probe_loads_launches_and_times_both_kernels(sim_cuda):
    events, refs = sim_cuda.live_events(), sim_cuda.primary_ctx_refs(0)
    r = _core.run_probe(0, compute_iterations=1000, memory_passes=2, repeats=3)
    # Simulated kernels take SIMCUDA_KERNEL_MS (1 ms) x SIMCUDA_SLOWDOWN (1) each.
    assert r["compute_ms"] == pytest.approx(1.0, rel=0.05)
    assert r["memory_ms"] == pytest.approx(1.0, rel=0.05)
    assert r["sm_count"] == 132
    assert r["compute_gflop"] == pytest.approx(132 * 4 * 256 * 1000 * 16 / 1e9)
    assert r["memory_gbyte"] == pytest.approx(2 * 2 * 128 * 2**20 / 1e9)
    assert sim_cuda.calls("cuModuleLoadData") == 1 and sim_cuda.calls("cuModuleUnload") == 1
    assert sim_cuda.calls("cuModuleGetFunction") == 2  # both entries exist in the PTX
    assert sim_cuda.calls("cuLaunchKernel") == 2 * (1 + 3)  # warm-up + repeats, two kernels
    assert sim_cuda.live_events() == events and sim_cuda.primary_ctx_refs(0) == refs


def test_a_driver_error_names_the_call_and_leaks_nothing(sim_cuda):
    refs = sim_cuda.primary_ctx_refs(0)
    sim_cuda.fail("cuModuleLoadData", CUDA_ERROR_INVALID_PTX)
    with pytest.raises(_core.CudaError, match=r"cuModuleLoadData.*failed"):
        _core.run_probe(0)
    assert sim_cuda.primary_ctx_refs(0) == refs
    assert _core.run_probe(0, repeats=1)["compute_ms"] > 0  # usable again


def test_bad_probe_options_name_the_parameter():
    with pytest.raises(ValueError, match="`compute_iterations=0` must be a positive"):
        _core.run_probe(0, compute_iterations=0)
    with pytest.raises(ValueError, match="`memory_passes=-1`"):
        _core.run_probe(0, memory_passes=-1)
    with pytest.raises(ValueError, match="`repeats=0` must be a positive integer"):
        _core.run_probe(0, repeats=0)


def test_throughputs_are_relative_to_the_median_of_the_other_ranks():
    results = relative_to_group([0, 1, 2, 3], np.array([[60.0, 3000.0], [60.0, 3000.0],
                                                        [30.0, 3000.0], [60.0, 1500.0]]))
    assert results[0] == ProbeResult(0, 60.0, 3000.0, 1.0, 1.0)
    assert results[2].compute_relative == 0.5 and results[2].relative == 0.5
    assert results[3].memory_relative == 0.5 and results[3].relative == 0.5
    # Two ranks: each is compared with the other, so the slow one reads its true 0.5.
    pair = relative_to_group([0, 1], np.array([[60.0, 3000.0], [30.0, 1500.0]]))
    assert (pair[0].relative, pair[1].relative) == (2.0, 0.5)
    # A group of one has nobody to compare with; a failed peer is left out of the reference.
    assert math.isnan(relative_to_group([7], np.array([[60.0, 3000.0]]))[7].relative)
    failed = relative_to_group([0, 1, 2], np.array([[60.0, 3000.0], [np.nan, np.nan],
                                                    [30.0, 1500.0]]))
    assert failed[2].relative == 0.5 and math.isnan(failed[1].relative)


class _FakeComm:
    """A group of one rank that gathers what it is given plus fixed rows of two peers."""

    global_ranks = (4, 5, 6)

    def all_gather(self, t):
        return [t, torch.tensor([50.0, 2000.0], dtype=torch.float64),
                torch.tensor([50.0, 2000.0], dtype=torch.float64)]


def test_a_rank_whose_probe_fails_contributes_nan_and_the_others_still_get_results(
        sim_cuda, caplog):
    sim_cuda.fail("cuLaunchKernel", 719)
    results = probe_group(_FakeComm(), 0)
    assert math.isnan(results[4].compute_tflops) and math.isnan(results[4].relative)
    assert results[5].relative == 1.0 and results[6].relative == 1.0  # compared with each other
    assert "the GPU probe failed on this rank" in caplog.text
