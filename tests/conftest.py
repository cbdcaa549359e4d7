"""Shared fixtures. Importing this points the engine at the simulated CUDA driver.

``STRAGGLER_LIBCUDA`` is set here, before any test imports ``straggler._core``: the driver is
loaded once per process, from that path. Set it yourself to run against a real driver
(``STRAGGLER_LIBCUDA=libcuda.so.1 pytest -m gpu``); the ``sim_cuda`` fixture then skips.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:  # `from sim.simcuda import ...`, `from _multirank import ...`
    sys.path.insert(0, str(TESTS))

from sim.simcuda import LIBCUDA, SimCuda  # noqa: E402
from sim.simnvml import LIBNVML  # noqa: E402

os.environ.setdefault("STRAGGLER_LIBCUDA", str(LIBCUDA))
os.environ.setdefault("STRAGGLER_LIBNVML", str(LIBNVML))  # the simulated NVML (sim/simnvml.py)


def uses_sim_cuda() -> bool:
    """Whether this process's engine loads the simulated driver."""
    return Path(os.environ["STRAGGLER_LIBCUDA"]).resolve() == LIBCUDA.resolve()


@pytest.fixture
def sim_cuda() -> Iterator[SimCuda]:
    """The simulated driver's controls, reset before and after the test."""
    if not uses_sim_cuda():
        pytest.skip(f"STRAGGLER_LIBCUDA={os.environ['STRAGGLER_LIBCUDA']} is not the simulator")
    sim = SimCuda()
    sim.reset()
    yield sim
    sim.reset()
