"""The NVML sampler's C++ under ThreadSanitizer: its thread started and stopped while other
threads sample, read and drain, healthy and with NVML failing (the thread stops itself).

tests/sim/sampler_stress.cpp drives csrc/telemetry/nvml_sampler.cpp directly (no Python, so the
threads really run at once) against the simulated NVML; both are built here with -fsanitize=thread.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sim.simcuda import REPO

CSRC = REPO / "csrc"
SIM = REPO / "tests" / "sim"


@pytest.fixture(scope="module")
def stress_build(tmp_path_factory) -> tuple[Path, Path]:
    cxx = shutil.which("g++") or shutil.which("clang++")
    assert cxx is not None, "no C++ compiler: `make test` needs one to build the simulators"
    out = tmp_path_factory.mktemp("tsan")
    flags = ["-std=c++17", "-O1", "-g", "-fsanitize=thread", "-pthread"]
    stress, libnvml = out / "sampler_stress", out / "libnvidia-ml.so.1"
    builds = [
        [cxx, *flags, f"-I{CSRC}", "-o", str(stress), str(SIM / "sampler_stress.cpp"),
         str(CSRC / "telemetry/nvml_sampler.cpp"), str(CSRC / "driver/nvml.cpp"),
         str(CSRC / "driver/cuda_driver.cpp"), "-ldl"],
        [cxx, *flags, f"-I{CSRC}", "-fPIC", "-shared", "-o", str(libnvml),
         str(SIM / "sim_nvml.cpp")],
    ]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd in builds]
    for proc in procs:
        text, _ = proc.communicate(timeout=280)
        assert proc.returncode == 0, text
    return stress, libnvml


@pytest.mark.parametrize("mode, scenario", [("healthy", ""), ("fails", "fail_from=5")])
def test_sampler_is_race_free_under_thread_sanitizer(stress_build, mode, scenario):
    stress, libnvml = stress_build
    env = dict(os.environ, STRAGGLER_LIBNVML=str(libnvml), SIMNVML_SCENARIO=scenario,
               TSAN_OPTIONS="halt_on_error=1")
    run = subprocess.run([str(stress), mode], env=env, capture_output=True, text=True,
                         timeout=240, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "OK", run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
