"""Shared fixtures. Importing this points the engine at the simulated CUDA driver.

``STRAGGLER_LIBCUDA`` is set here, before any test imports ``straggler._core``: the driver is
loaded once per process, from that path. Set it yourself to run against a real driver
(``STRAGGLER_LIBCUDA=libcuda.so.1 pytest -m gpu``); the ``sim_cuda`` fixture then skips.

On the simulator the suite runs as on a CPU machine even where a GPU is present: real GPUs are
hidden from torch (``CUDA_VISIBLE_DEVICES=""``, inherited by every spawned rank). A real CUDA
torch beside the simulated driver would hand the engine streams and device ordinals of another
driver, and change what CPU tests assert (thread counts, device counts, ranks per GPU). The
``gpu`` tests run with the real driver, where nothing is hidden.
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
# A build of the op observer into its cache (timing/native_observer.py) stays in the checkout.
os.environ.setdefault("STRAGGLER_CACHE_DIR", str(TESTS.parent / "build" / "cache"))


def uses_sim_cuda() -> bool:
    """Whether this process's engine loads the simulated driver."""
    return Path(os.environ["STRAGGLER_LIBCUDA"]).resolve() == LIBCUDA.resolve()


if uses_sim_cuda():  # before anything initialises torch's CUDA (it reads this once)
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


def missing_gpu() -> str | None:
    """Why `gpu` tests cannot run in this process (None: a real driver and a CUDA torch)."""
    if uses_sim_cuda():
        return ("no real GPU in this run: STRAGGLER_LIBCUDA is the simulator (on a GPU host: "
                "`make gpu-check`, or STRAGGLER_LIBCUDA=libcuda.so.1 "
                "STRAGGLER_LIBNVML=libnvidia-ml.so.1 pytest -m gpu)")
    import torch

    if not torch.cuda.is_available():
        return (f"no NVIDIA GPU visible to torch {torch.__version__} "
                "(torch.cuda.is_available() is False)")
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every `gpu` test skips, naming the missing GPU, where there is none."""
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    no_gpu = missing_gpu() if gpu_items else None
    if no_gpu:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=no_gpu))


@pytest.fixture
def sim_cuda() -> Iterator[SimCuda]:
    """The simulated driver's controls, reset before and after the test."""
    if not uses_sim_cuda():
        pytest.skip(f"STRAGGLER_LIBCUDA={os.environ['STRAGGLER_LIBCUDA']} is not the simulator")
    sim = SimCuda()
    sim.reset()
    yield sim
    sim.reset()


@pytest.fixture
def clean_detector(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No detector before or after the test, and ``STRAGGLER_DISABLE`` unset."""
    from straggler import Detector

    monkeypatch.delenv("STRAGGLER_DISABLE", raising=False)
    Detector.shutdown()
    yield
    Detector.shutdown()


@pytest.fixture(autouse=True)
def _multirank_marker_is_required(request: pytest.FixtureRequest) -> Iterator[None]:
    """`_multirank.run_ranks` runs only in a test marked `multirank` (see its docstring)."""
    import _multirank

    _multirank.CURRENT_TEST_MARKED = request.node.get_closest_marker("multirank") is not None
    yield
    _multirank.CURRENT_TEST_MARKED = None
