"""The one table of what counts as communication (issue #24 item 3).

A collective's duration is longest on the ranks that wait for a straggler, so its time is
never in a compute score (docs/architecture.md, design "Compute scores exclude communication").
Three readers match names against this table, each in its own form:

- the C++ op observer (`straggler._ops`, csrc/ops/observer.cpp) gets `record_prefixes()` when
  it is built (`timing/capture.py`), as it gets the untimed ops: a ``RecordFunction`` name
  starting with one of them is communication;
- the Python fallback observer (`timing/capture.py`) compares an ``OpOverload``'s namespace
  with `NAMESPACES`;
- the scores (`analysis/scoring.py`) drop GPU timers whose name contains one of
  `SCORE_MARKERS` (case-insensitive), e.g. NCCL kernels.

tests/test_comm_ops.py checks that the three agree.
"""

from __future__ import annotations

__all__ = ["NAMESPACES", "BACKEND_RECORDS", "KERNEL_MARKERS", "record_prefixes",
           "SCORE_MARKERS", "is_communication_record"]

NAMESPACES: tuple[str, ...] = ("c10d", "_c10d_functional", "c10d_functional",
                               "_c10d_functional_autograd", "_dtensor")
"""torch op namespaces whose ops move data between ranks or wait for it (``c10d::allreduce_``,
``_c10d_functional::all_reduce``, DTensor's redistribution ``_dtensor::...``)."""

BACKEND_RECORDS: tuple[str, ...] = ("nccl:", "gloo:", "record_param_comms")
"""Profiler records that process-group backends put around a collective (no ``::``)."""

KERNEL_MARKERS: tuple[str, ...] = ("nccl", "rccl")
"""Substrings of the GPU kernel names of collectives (``ncclDevKernel_AllReduce_Sum_f32``)."""


def record_prefixes() -> list[str]:
    """Prefixes of ``RecordFunction`` names of communication, for the C++ observer."""
    return [f"{ns}::" for ns in NAMESPACES] + list(BACKEND_RECORDS)


SCORE_MARKERS: tuple[str, ...] = (*KERNEL_MARKERS, *record_prefixes())
"""Case-insensitive substrings that mark a GPU timer as communication in the scores."""


def is_communication_record(name: str) -> bool:
    """Whether a ``RecordFunction`` name is communication (as the C++ observer decides)."""
    return name.startswith(tuple(record_prefixes()))
