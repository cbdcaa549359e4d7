"""What a training loop enters and wraps, and when reports are due: sections (host clock and
GPU timers), per-op capture, wrapped callables, the report interval.

The names below are the sub-package's API. Per-op capture (`timing.capture`) imports torch and
is imported by its module path when it is turned on, so that importing this package stays free.
"""

from __future__ import annotations

from .callables import CallableId, CallableWrapper
from .gpu import GpuTiming
from .interval import ReportIntervalTracker
from .registry import SectionRegistry
from .sections import Section, SectionKind
from .untimed_ops import UNTIMED_OPS

__all__ = ["SectionKind", "Section", "SectionRegistry", "GpuTiming", "CallableId",
           "CallableWrapper", "ReportIntervalTracker", "UNTIMED_OPS"]
