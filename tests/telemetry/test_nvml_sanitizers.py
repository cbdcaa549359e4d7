"""The NVML sampler's C++ under the sanitizers: its thread started and stopped while other threads
sample, read and drain, healthy and with NVML failing (the thread stops itself).

tests/sim/sampler_stress.cpp drives csrc/telemetry/nvml_sampler.cpp and its field table
(nvml_fields.cpp) directly (no Python, so the threads really run at once) against the simulated
NVML; both are built here with -fsanitize=thread (races, deadlocks) and with
-fsanitize=address,undefined (memory errors, leaks, undefined behaviour).
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

SANITIZERS = {
    "thread": ["-fsanitize=thread"],
    "address,undefined": ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                          "-fno-omit-frame-pointer"],
}


@pytest.fixture(scope="module", params=list(SANITIZERS))
def stress_build(request, tmp_path_factory) -> tuple[str, Path, Path]:
    cxx = shutil.which("g++") or shutil.which("clang++")
    assert cxx is not None, "no C++ compiler: `make test` needs one to build the simulators"
    out = tmp_path_factory.mktemp("sanitizer")
    flags = ["-std=c++17", "-O1", "-g", *SANITIZERS[request.param], "-pthread"]
    stress, libnvml = out / "sampler_stress", out / "libnvidia-ml.so.1"
    builds = [
        [cxx, *flags, f"-I{CSRC}", "-o", str(stress), str(SIM / "sampler_stress.cpp"),
         str(CSRC / "telemetry/nvml_sampler.cpp"), str(CSRC / "telemetry/nvml_fields.cpp"),
         str(CSRC / "driver/nvml.cpp"), str(CSRC / "driver/cuda_driver.cpp"), "-ldl"],
        [cxx, *flags, f"-I{CSRC}", "-fPIC", "-shared", "-o", str(libnvml),
         str(SIM / "sim_nvml.cpp")],
    ]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd in builds]
    for proc in procs:
        text, _ = proc.communicate(timeout=280)
        assert proc.returncode == 0, text
    return request.param, stress, libnvml


@pytest.mark.parametrize("mode, scenario", [("healthy", ""), ("fails", "fail_from=5")])
def test_sampler_is_clean_under_the_sanitizers(stress_build, mode, scenario):
    sanitizer, stress, libnvml = stress_build
    env = dict(os.environ, STRAGGLER_LIBNVML=str(libnvml), SIMNVML_SCENARIO=scenario,
               TSAN_OPTIONS="halt_on_error=1", ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    env.pop("LD_PRELOAD", None)  # the ASan runtime must load first
    run = subprocess.run([str(stress), mode], env=env, capture_output=True, text=True,
                         timeout=240, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "OK", run.stdout + run.stderr
    for marker in ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:"):
        assert marker not in run.stderr, f"{sanitizer}: {run.stderr}"
