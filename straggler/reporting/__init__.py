"""One report: the `Report` type (`report`), its making across ranks (`generator`: names to
ids, fixed-size gathers, scores) and its completion after the scores (`annotation`: the
persistence policy's decision, GPU identities and causes).

The names below are the sub-package's API. `generator` and `annotation` run collectives and
import torch, so ``from straggler import Report`` must not import them: `ReportGenerator`, at
NVRx's path (``straggler.reporting.ReportGenerator``, as ``nvidia_resiliency_ext...straggler
.reporting.ReportGenerator``), loads its module on first use, like the top-level names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .report import Report, StragglerId

__all__ = ["Report", "StragglerId", "ReportGenerator"]

if TYPE_CHECKING:  # pragma: no cover
    from .generator import ReportGenerator


def __getattr__(name: str) -> Any:
    if name != "ReportGenerator":
        raise AttributeError(f"module 'straggler.reporting' has no attribute {name!r}")
    value = importlib.import_module(".generator", __name__).ReportGenerator
    globals()[name] = value
    return value
