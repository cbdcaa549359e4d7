"""The GPU health probe across a group: is this GPU slow, or does this rank just have more work?

Every rank runs the same fixed-work kernels (`straggler._core.run_probe`: an FMA-bound part and
an HBM-bound part, a few milliseconds) on its own GPU, and one all_gather of two floats shares
the throughputs. A rank's result is its throughput relative to the median of the *other* ranks,
so 1.0 is a typical GPU of this job and 0.6 a GPU that does the same work 40% slower than its
peers, whatever the training job does. (Leaving the rank out keeps one slow GPU from dragging
the reference down: in a group of two, the slow one reads 0.5, not 0.67.) `Detector.run_probe()`
is the entry point; `probe_group` is the collective itself.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["ProbeResult", "probe_group", "relative_to_group"]

log = logging.getLogger("straggler")


@dataclass(frozen=True)
class ProbeResult:
    """One rank's probe: throughputs, and how they compare with the other ranks' median."""

    rank: int
    compute_tflops: float
    """FP32 FMA throughput of the compute kernel (NaN: the probe failed on that rank)."""
    memory_gbps: float
    """Bytes read and written per second by the memory kernel, in GB/s."""
    compute_relative: float
    """``compute_tflops`` / the median of the other ranks' (NaN in a group of one)."""
    memory_relative: float
    """``memory_gbps`` / the median of the other ranks'."""

    @property
    def relative(self) -> float:
        """The weaker of the two relative throughputs: 1.0 typical, below 1 slower."""
        vals = [v for v in (self.compute_relative, self.memory_relative) if math.isfinite(v)]
        return min(vals) if vals else math.nan


def _median_of_others(column: np.ndarray, i: int) -> float:
    others = np.delete(column, i)
    others = others[np.isfinite(others)]
    return float(np.median(others)) if others.size else math.nan


def relative_to_group(ranks: list[int], throughputs: np.ndarray) -> dict[int, ProbeResult]:
    """`ProbeResult` per rank from an (n, 2) array of [TFLOP/s, GB/s] rows (NaN: failed)."""
    rows = np.asarray(throughputs, dtype=np.float64).reshape(len(ranks), 2)
    out = {}
    for i, r in enumerate(ranks):
        with np.errstate(all="ignore"):
            rel = [rows[i, j] / _median_of_others(rows[:, j], i) for j in range(2)]
        out[r] = ProbeResult(r, float(rows[i, 0]), float(rows[i, 1]), float(rel[0]),
                             float(rel[1]))
    return out


def run_local_probe(device: int, **options: Any) -> tuple[float, float]:
    """(TFLOP/s, GB/s) of this rank's GPU; raises what `_core.run_probe` raises."""
    from .. import _core

    r = _core.run_probe(device, **options)
    return (r["compute_gflop"] / r["compute_ms"],  # GFLOP/ms = TFLOP/s
            r["memory_gbyte"] / r["memory_ms"] * 1e3)


def probe_group(comm: Any, device: int, **options: Any) -> dict[int, ProbeResult]:
    """Collective over ``comm`` (a `straggler.dist.comm.Comm`): every rank probes its GPU.

    A rank whose probe fails (no CUDA, a driver error) logs why and contributes NaN; the others
    still get their results. Every rank returns the same ``{global rank: ProbeResult}``.
    """
    try:
        local = run_local_probe(device, **options)
    except Exception as exc:  # noqa: BLE001 - this rank has no result; the collective goes on
        log.warning("straggler: the GPU probe failed on this rank: %s: %s",
                    type(exc).__name__, exc)
        local = (math.nan, math.nan)
    rows = comm.all_gather(torch.tensor(local, dtype=torch.float64))
    return relative_to_group(list(comm.global_ranks), torch.stack(rows).numpy())
