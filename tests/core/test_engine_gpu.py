"""TimerEngine on a real GPU and driver: agrees with torch.cuda.Event on the same work.

Runs only where the engine loads a real driver and torch has CUDA:
``STRAGGLER_LIBCUDA=libcuda.so.1 .venv/bin/python -m pytest -m gpu tests/core/test_engine_gpu.py``
(with a CUDA build of torch). Everywhere else the simulated-driver tests cover the engine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from straggler import _core

from sim.simcuda import LIBCUDA

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(Path(os.environ["STRAGGLER_LIBCUDA"]).resolve() == LIBCUDA.resolve()
                       or not torch.cuda.is_available(),
                       reason="needs a real CUDA driver (STRAGGLER_LIBCUDA) and a CUDA torch"),
]


def busy(n: int = 4096, reps: int = 20) -> None:
    a = torch.randn(n, n, device="cuda")
    for _ in range(reps):
        a = a @ a
        a = a / a.norm()


def test_engine_agrees_with_torch_events_on_the_current_stream():
    device = torch.cuda.current_device()
    ok, reason = _core.cuda_status(device)
    assert ok, reason
    with _core.TimerEngine("cuda", device=device) as eng:
        stream = torch.cuda.current_stream()
        busy()  # warm-up: cuBLAS handles, clocks
        torch.cuda.synchronize()
        reference = []
        for _ in range(5):
            t0 = torch.cuda.Event(enable_timing=True)
            t1 = torch.cuda.Event(enable_timing=True)
            eng.start("mm", stream.cuda_stream)
            t0.record(stream)
            busy()
            t1.record(stream)
            eng.stop("mm", stream.cuda_stream)
            reference.append((t0, t1))
        # ~0.2 s of matmuls were just queued: the last pairs cannot have finished yet.
        assert eng.harvest() < 5
        assert eng.pending() >= 1
        eng.flush()
        assert eng.pending() == 0
        ours = eng.durations("mm")
        torch.cuda.synchronize()
        theirs = [a.elapsed_time(b) for a, b in reference]
        assert torch.cuda.current_device() == device  # the engine left the device alone
    # Our events bracket torch's on the same stream: ours can only be a little longer.
    for mine, ref in zip(ours, theirs, strict=True):
        assert ref - 0.05 <= mine <= ref * 1.10 + 0.5


def test_engine_on_a_side_stream():
    with _core.TimerEngine("cuda", device=torch.cuda.current_device()) as eng:
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            eng.start("side", side.cuda_stream)
            busy(2048, 5)
            eng.stop("side", side.cuda_stream)
        eng.flush()
        (d,) = eng.durations("side")
        assert d > 0.0
