"""The demo (examples/demo.py), shortened: it names the injected straggler (and its cause), and
nobody when clean; with --simulated-gpu, the GPU cause computed from simulated timers and NVML."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo.py"
# Shorter than `make demo`: a report every 0.5 s. The demo runs until its verdict (the report
# that confirms a rank, or enough quiet reports), however fast or loaded the machine.
SHORT = ["--report-interval", "0.5", "--hidden", "128"]

# serial: `make test` runs the demos alone (its serial pass), not beside another multi-rank
# test: their ranks train flat out (one demo beside two spinning processes too), and a clean
# run's verdict is load-sensitive (on this shared machine at load ~12 from other jobs, the clean
# demo confirmed rank 0 in one run of two).
pytestmark = [pytest.mark.multirank, pytest.mark.serial]


def _run(*args: str, busy: int = 0) -> list[str]:
    env = dict(os.environ)
    # The demo runs as a user would: no simulated driver unless --simulated-gpu asks for one.
    for key in ("STRAGGLER_LIBCUDA", "STRAGGLER_LIBNVML", "SIMNVML_SCENARIO"):
        env.pop(key, None)
    # busy: processes spinning on the CPU for the whole run (a loaded machine).
    spin = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        out = subprocess.run([sys.executable, str(DEMO), *SHORT, *args], capture_output=True,
                             text=True, timeout=240, env=env, check=False)
    finally:
        for p in spin:
            p.kill()
            p.wait()
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip().splitlines()


def test_demo_names_the_default_slow_rank_with_its_node_on_a_loaded_machine():
    # One run for two checks (the suite's time): the default slow rank (2), its node and cause,
    # with the machine loaded. `--slow-rank` is exercised by the simulated-GPU demo below.
    # Reports every 1 s, not 0.5: windows of about 60 steps with every core busy confirmed
    # healthy rank 0 beside rank 2 in one clean-clone `make test` of three (2026-11-25): under
    # the 150 steps a window needs on a loaded host (docs/policy.md, "Known limits"), a verdict
    # `make demo` (2 s) does not risk.
    lines = _run("--world-size", "3", "--report-interval", "1", busy=os.cpu_count() or 2)
    assert lines[0].startswith("injected straggler: rank 2")
    assert any(line.startswith("rank  node") for line in lines)  # at least one report table
    assert lines[-1] == f"stragglers: rank 2 (node {socket.gethostname()}): unknown"
    # Its cause just before: no GPU timers and no NVML on a CPU run, so the label is honest
    # about what was missing, and the evidence names the slow section.
    assert lines[-2].startswith(f"rank 2 ({socket.gethostname()}): unknown: section 'forward'")


def test_demo_without_slowdown_flags_nobody():
    lines = _run("--slowdown", "1.0", "--world-size", "3")
    assert lines[0] == "injected straggler: none"
    assert lines[-1] == "stragglers: none"
    assert not any(re.match(r"rank \d+ \(", line) for line in lines)  # no cause lines


def test_demo_simulated_gpu_names_the_thermal_cause():
    # --simulated-gpu: the simulated driver and NVML of `make sim` (tests/sim/); rank 1's GPU is
    # 3x slower (exact: simulated time) and its NVML reports thermal throttling at 92 C.
    lines = _run("--slow-rank", "1", "--world-size", "3", "--simulated-gpu", "thermal")
    assert lines[0] == \
        "injected straggler: rank 1 (SIMULATED GPU x3 slower, SIMULATED NVML: thermal)"
    assert lines[1].startswith("note: the GPUs and NVML are SIMULATED")
    host = socket.gethostname()
    assert lines[-1] == f"stragglers: rank 1 (node {host}): gpu_thermal_throttling"
    # The cause line: the simulated board's identity, the label and the NVML evidence.
    assert lines[-2].startswith(f"rank 1 ({host}, NVIDIA H100 80GB HBM3 (simulated)")
    assert ": gpu_thermal_throttling: " in lines[-2] and "92 C" in lines[-2]
    # The tables carry GPU scores (the CPU-only run has none) and the label in rank 1's row.
    assert any(line.startswith("rank  node  gpu rel") for line in lines)
    rows = [line.split() for line in lines if re.match(r"\s+\d+\s", line)]
    assert any(row[0] == "1" and row[-1] == "gpu_thermal_throttling" for row in rows)
    # The others wait for rank 1 at collectives: DDP's (`world`) and the demo's own stop
    # broadcast, whose group has a description, so no group is named by its members alone.
    waited = [line for line in lines if line.startswith("the job waited")]
    assert waited, lines
    assert not any(re.search(r"(: |; )ranks \d", line) for line in waited), waited
    # (No assertion on the other rows: on a loaded machine a healthy rank's host-timed section
    # may dip below the threshold in one report and get `host_side`; the verdict rests on the
    # policy's confirmed ranks.)
