"""Old import paths keep working: ``straggler.sections``, ``straggler.report``, ... (before the
sub-packages of issue #12) resolve to the modules that now hold that code.

One table, `MOVED`, maps each old module name to its new one. `install` puts a finder on
``sys.meta_path`` that answers only for those names, lazily: ``import straggler.policy`` imports
``straggler.analysis.policy`` and binds the *same* module object under the old name, so
``mock.patch("straggler.policy.X")`` and ``isinstance`` checks see one module, not a copy.
``straggler.reporting`` and ``straggler.telemetry`` were modules and are now packages; their
``__getattr__`` forwards the old attribute names with `forward`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from collections.abc import Sequence
from typing import Any

__all__ = ["MOVED", "install", "forward"]

MOVED = {
    "straggler.callables": "straggler.timing.callables",
    "straggler.capture": "straggler.timing.capture",
    "straggler.interval": "straggler.timing.interval",
    "straggler.sections": "straggler.timing.sections",
    "straggler.untimed_ops": "straggler.timing.untimed_ops",
    "straggler.causes": "straggler.analysis.causes",
    "straggler.policy": "straggler.analysis.policy",
    "straggler.scoring": "straggler.analysis.scoring",
    "straggler.statistics": "straggler.analysis.statistics",
    "straggler.report": "straggler.reporting.report",
    "straggler.observers": "straggler.sinks.observers",
    "straggler.prometheus": "straggler.sinks.prometheus",
    "straggler.report_record": "straggler.sinks.record",
    "straggler.reportlog": "straggler.sinks.reportlog",
    "straggler.probe": "straggler.telemetry.probe",
    "straggler.comm": "straggler.dist.comm",
    "straggler.failopen": "straggler.dist.failopen",
}


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the new module itself."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.target_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.target_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the old name's spec on the shared module: give its own back.
        module.__spec__ = self.target_spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the names in `MOVED` and nothing else."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (`straggler/__init__.py` calls it)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())


def forward(package: str, module: str, name: str) -> Any:
    """An old attribute of a module that became ``package``, read from its new ``module``."""
    try:
        return getattr(importlib.import_module(module), name)
    except AttributeError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
