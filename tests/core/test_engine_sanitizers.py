"""The engine's C++ under ThreadSanitizer: several threads on one engine, with injected errors.

tests/sim/engine_stress.cpp drives the engine (csrc/timing/*.cpp) directly (no Python, so the
threads really run at once), against the simulated driver; both are built here with
-fsanitize=thread. (tests/cpp/ runs the engine's unit tests under it too, on a fake backend.)
A data race, a deadlock or an exception escaping a thread fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from sim.simcuda import REPO

CSRC = REPO / "csrc"
SIM = REPO / "tests" / "sim"


def test_engine_is_race_free_under_thread_sanitizer(tmp_path: Path):
    cxx = shutil.which("g++") or shutil.which("clang++")
    assert cxx is not None, "no C++ compiler: `make test` needs one to build the simulators"
    flags = ["-std=c++17", "-O1", "-g", "-fsanitize=thread", "-pthread"]
    stress = tmp_path / "engine_stress"
    libcuda = tmp_path / "libcuda.so.1"
    engine = sorted(str(p) for p in (CSRC / "timing").glob("*.cpp"))
    builds = [
        [cxx, *flags, f"-I{CSRC}", "-o", str(stress), str(SIM / "engine_stress.cpp"), *engine,
         str(CSRC / "driver/cuda_driver.cpp"), "-ldl"],
        [cxx, *flags, f"-I{CSRC}", "-fPIC", "-shared", "-o", str(libcuda),
         str(SIM / "sim_cuda.cpp")],
    ]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd in builds]
    for proc in procs:
        out, _ = proc.communicate(timeout=280)
        assert proc.returncode == 0, out
    env = dict(os.environ, STRAGGLER_LIBCUDA=str(libcuda), TSAN_OPTIONS="halt_on_error=1")
    run = subprocess.run([str(stress)], env=env, capture_output=True, text=True, timeout=240,
                         check=False)
    assert run.returncode == 0 and run.stdout.strip() == "OK", run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
