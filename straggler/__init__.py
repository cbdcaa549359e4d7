"""straggler: find slow ranks in distributed PyTorch training, and say why.

NVRx-compatible entry points::

    from straggler import Detector, CallableId, Report, StragglerId, Statistic

Importing is free: names load on first use, and nothing touches a GPU, NVML or a process group
until `Detector.initialize()` and the first profiled section. `straggler.__version__` is the
package version.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["__version__", "Detector", "CallableId", "Report", "StragglerId", "Statistic",
           "SectionKind", "PolicyConfig"]

_LAZY = {
    "Detector": ".detector",
    "CallableId": ".timing.callables",
    "Report": ".reporting.report",
    "StragglerId": ".reporting.report",
    "Statistic": ".analysis.statistics",
    "SectionKind": ".timing.sections",
    "PolicyConfig": ".analysis.policy",
}

if TYPE_CHECKING:  # pragma: no cover
    from .timing.callables import CallableId
    from .detector import Detector
    from .analysis.policy import PolicyConfig
    from .reporting.report import Report, StragglerId
    from .timing.sections import SectionKind
    from .analysis.statistics import Statistic


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from ._version import package_version

        globals()[name] = version = package_version()
        return version
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'straggler' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
