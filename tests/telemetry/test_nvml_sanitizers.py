"""The NVML sampler's C++ under the sanitizers: its thread started and stopped while other threads
sample, read and drain, healthy and with NVML failing (the thread stops itself).

tests/sim/sampler_stress.cpp drives csrc/telemetry/nvml_sampler.cpp and its field table
(nvml_fields.cpp) directly (no Python, so the threads really run at once) against the simulated
NVML; both are built with -fsanitize=thread (races, deadlocks) and with
-fsanitize=address,undefined (memory errors, leaks, undefined behaviour): the Makefile's
``stress-bins``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from _stress_builds import stress_build

BUILDS = {"thread": "tsan", "address,undefined": "asan"}


@pytest.fixture(scope="module", params=list(BUILDS))
def stress_build_of(request) -> tuple[str, Path, Path]:
    build = BUILDS[request.param]
    stress, libnvml = stress_build(f"{build}/sampler_stress", f"{build}/sim/libnvidia-ml.so.1")
    return request.param, stress, libnvml


@pytest.mark.parametrize("mode, scenario", [("healthy", ""), ("fails", "fail_from=5")])
def test_sampler_is_clean_under_the_sanitizers(stress_build_of, mode, scenario):
    sanitizer, stress, libnvml = stress_build_of
    env = dict(os.environ, STRAGGLER_LIBNVML=str(libnvml), SIMNVML_SCENARIO=scenario,
               TSAN_OPTIONS="halt_on_error=1", ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    env.pop("LD_PRELOAD", None)  # the ASan runtime must load first
    run = subprocess.run([str(stress), mode], env=env, capture_output=True, text=True,
                         timeout=240, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "OK", run.stdout + run.stderr
    for marker in ("WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "runtime error:"):
        assert marker not in run.stderr, f"{sanitizer}: {run.stderr}"
