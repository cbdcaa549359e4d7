"""The detector's own collectives: fixed-size tensors over gloo with a timeout on every call
(`comm`), and the agreed fail-open gate (`failopen`). Imports torch.distributed."""

from __future__ import annotations

from .comm import Comm, CommError
from .failopen import ReportGate

__all__ = ["Comm", "CommError", "ReportGate"]
