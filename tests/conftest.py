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

import json
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


# Seconds each slow test took in a `make test` (tests of 1 s or more; a module-scoped set-up is
# counted in its file's first test). Only the order in which pytest-xdist hands out the files
# depends on it: a test missing here counts as 0 s, a stale entry is ignored.
DURATIONS = TESTS / "durations.json"


@pytest.hookimpl(trylast=True)  # after pytest grouped the parametrized set-ups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every `gpu` test skips, naming the missing GPU, where there is none.

    On a pytest-xdist worker the test files then go longest first (DURATIONS), each file's
    tests together and in their order: with `--dist loadfile --no-loadscope-reorder` (`make
    test`'s parallel pass) a worker takes the next file as it runs out of tests, so no long file
    starts last and leaves the other core idle.
    """
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    no_gpu = missing_gpu() if gpu_items else None
    if no_gpu:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=no_gpu))
    if not hasattr(config, "workerinput"):
        return
    seconds = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    file_s: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        path = item.nodeid.split("::", 1)[0]
        file_s[path] = file_s.get(path, 0.0) + float(seconds.get(item.nodeid, 0.0))
        first.setdefault(path, index)

    def key(item: pytest.Item) -> tuple[float, int]:
        path = item.nodeid.split("::", 1)[0]
        return -file_s[path], first[path]

    items.sort(key=key)


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
