"""The engine's C++ under ThreadSanitizer: several threads on one engine, with injected errors.

tests/sim/engine_stress.cpp drives the engine (csrc/timing/*.cpp) directly (no Python, so the
threads really run at once), against the simulated driver; both are built with
-fsanitize=thread (the Makefile's ``stress-bins``, from the objects of tests/cpp/'s TSan build,
which runs the engine's unit tests under it too, on a fake backend). A data race, a deadlock or
an exception escaping a thread fails the test.
"""

from __future__ import annotations

import os
import subprocess

from _stress_builds import stress_build


def test_engine_is_race_free_under_thread_sanitizer():
    stress, libcuda = stress_build("tsan/engine_stress", "tsan/sim/libcuda.so.1")
    env = dict(os.environ, STRAGGLER_LIBCUDA=str(libcuda), TSAN_OPTIONS="halt_on_error=1")
    run = subprocess.run([str(stress)], env=env, capture_output=True, text=True, timeout=240,
                         check=False)
    assert run.returncode == 0 and run.stdout.strip() == "OK", run.stdout + run.stderr
    assert "WARNING: ThreadSanitizer" not in run.stderr, run.stderr
