"""ctypes handle on the simulated CUDA driver (build/sim/libcuda.so.1) and its test controls.

The engine loads the driver from ``STRAGGLER_LIBCUDA``; tests/conftest.py points it here before
anything imports ``straggler._core``. Loading the same path with ctypes returns the very library
the engine uses, so the controls below act on the engine's driver::

    from sim.simcuda import SimCuda

    sim = SimCuda()
    sim.enqueue(0, 30.0)         # 30 ms (x SIMCUDA_SLOWDOWN) of work on the default stream
    sim.fail("cuEventQuery", CUDA_ERROR_LAUNCH_FAILED, count=1)

Knobs that are read once per process (SIMCUDA_SLOWDOWN, SIMCUDA_DEVICE_COUNT, ...) need a fresh
process: :func:`run_python` runs a snippet in one with extra environment.
"""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIBCUDA = REPO / "build" / "sim" / "libcuda.so.1"

# CUresult values (cuda.h) that tests inject or expect.
CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_NOT_INITIALIZED = 3
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_INVALID_HANDLE = 400
CUDA_ERROR_NOT_READY = 600
CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_LAUNCH_FAILED = 719
CUDA_ERROR_UNKNOWN = 999


class SimCuda:
    """The simulated driver's test controls (see tests/sim/README.md)."""

    def __init__(self, path: str | os.PathLike[str] = LIBCUDA) -> None:
        if not Path(path).exists():
            raise FileNotFoundError(f"{path} is missing: run `make sim`")
        self.path = str(path)
        lib = ctypes.CDLL(self.path)
        lib.simcuda_enqueue.argtypes = [ctypes.c_void_p, ctypes.c_double]
        lib.simcuda_enqueue.restype = ctypes.c_int
        lib.simcuda_complete.argtypes = []
        lib.simcuda_complete.restype = None
        lib.simcuda_live_events.argtypes = []
        lib.simcuda_live_events.restype = ctypes.c_int
        lib.simcuda_primary_ctx_refs.argtypes = [ctypes.c_int]
        lib.simcuda_primary_ctx_refs.restype = ctypes.c_int
        lib.simcuda_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.simcuda_fail.restype = ctypes.c_int
        lib.simcuda_calls.argtypes = [ctypes.c_char_p]
        lib.simcuda_calls.restype = ctypes.c_long
        lib.simcuda_slowdown.argtypes = []
        lib.simcuda_slowdown.restype = ctypes.c_double
        lib.simcuda_reset.argtypes = []
        lib.simcuda_reset.restype = None
        self._lib = lib

    def enqueue(self, stream: int, ms: float) -> None:
        """Put ``ms`` of work (times the slowdown) on ``stream`` (a CUstream as int; 0: default)."""
        rc = self._lib.simcuda_enqueue(stream or None, float(ms))
        if rc != CUDA_SUCCESS:
            raise ValueError(f"`ms={ms!r}` must be >= 0")

    def kernel(self, engine: object, stream: int, ms: float) -> None:
        """One compute op of ``ms`` on ``stream``, reported to ``engine``'s busy-time API as the
        op observer (straggler._ops) reports a real op: op_begin, the launch, op_end."""
        token = engine.op_begin(stream)  # type: ignore[attr-defined]
        self.enqueue(stream, ms)
        engine.op_end(token, -1, stream)  # type: ignore[attr-defined]

    def complete(self) -> None:
        """End all work queued so far now: recorded events complete, waits return."""
        self._lib.simcuda_complete()

    def live_events(self) -> int:
        """Events created and not yet destroyed, across the process."""
        return self._lib.simcuda_live_events()

    def primary_ctx_refs(self, device: int = 0) -> int:
        """References held on ``device``'s primary context."""
        return self._lib.simcuda_primary_ctx_refs(device)

    def fail(self, fn: str, code: int, count: int = 1) -> None:
        """The next ``count`` calls of entry point ``fn`` return ``code`` (count < 0: always)."""
        if self._lib.simcuda_fail(fn.encode(), code, count) != 0:
            raise ValueError(f"`fn={fn!r}` is not an entry point of the simulated driver")

    def calls(self, fn: str) -> int:
        """Calls of entry point ``fn`` since load or :meth:`reset`."""
        n = self._lib.simcuda_calls(fn.encode())
        if n < 0:
            raise ValueError(f"`fn={fn!r}` is not an entry point of the simulated driver")
        return n

    @property
    def slowdown(self) -> float:
        """The SIMCUDA_SLOWDOWN factor this process runs with."""
        return self._lib.simcuda_slowdown()

    def reset(self) -> None:
        """Clear injected failures, call counters and stream timelines."""
        self._lib.simcuda_reset()


@functools.lru_cache(maxsize=1)
def _shared() -> SimCuda:
    return SimCuda()


def gpu_sleep(seconds: float) -> None:
    """``seconds`` of simulated GPU work, then a host wait as long (a step synchronizing).

    The work is reported to the running Detector's engine as one op, as ``straggler._ops``
    reports a real kernel-launching op, so it is busy time and reaches GPU scores; a plain
    ``time.sleep`` is host time, which GPU scores do not see (docs/scores.md). Without a
    running Detector the work is queued unreported.
    """
    import time

    from straggler import Detector

    core = Detector.core()
    if core is None:
        _shared().enqueue(0, seconds * 1000.0)
    else:
        _shared().kernel(core.engine, 0, seconds * 1000.0)
    time.sleep(seconds)


def sim_env(**knobs: object) -> dict[str, str]:
    """A copy of os.environ using the simulated driver, plus ``knobs`` (e.g. SIMCUDA_SLOWDOWN=3)."""
    env = dict(os.environ)
    env["STRAGGLER_LIBCUDA"] = str(LIBCUDA)
    env.update({k: str(v) for k, v in knobs.items()})
    return env


def run_python(code: str, timeout_s: float = 120.0, **knobs: object) -> str:
    """Run ``code`` in a fresh interpreter with :func:`sim_env` (``knobs``); return its stdout.

    Raises AssertionError with the child's output if it fails.
    """
    proc = subprocess.run([sys.executable, "-c", code], env=sim_env(**knobs), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"child failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout
