"""Old import paths keep working: ``straggler.sections``, ``straggler.report``, ... (before the
sub-packages of issue #12) resolve to the modules that now hold that code.

One table, `MOVED`, maps each old module name to its new one. `install` puts a finder on
``sys.meta_path`` that answers only for those names, lazily: ``import straggler.policy`` imports
``straggler.analysis.policy`` and binds the *same* module object under the old name, so
``mock.patch("straggler.policy.X")`` and ``isinstance`` checks see one module, not a copy.
Names that left a module which still exists (``straggler.telemetry`` and
``straggler.reporting`` were modules and are now packages; ``ReportAnnotator`` left
``straggler.analysis.causes``) are in the second table, `MOVED_NAMES`: that module's
``__getattr__`` reads them from their new home with `forward`, on first use only.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from collections.abc import Sequence
from typing import Any

__all__ = ["MOVED", "MOVED_NAMES", "install", "forward"]

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



def _names(module: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, module)


# Old module -> {name it no longer defines: the module that holds it now}.
MOVED_NAMES: dict[str, dict[str, str]] = {
    "straggler.telemetry": {
        **_names("straggler.telemetry.nvml", "DEFAULT_PERIOD_S", "GpuIdentity", "NvmlTelemetry"),
        **_names("straggler.telemetry.window", "FIELDS", "RAW_FIELDS", "REASONS",
                 "WindowAggregator", "aggregate_window", "as_mapping"),
        **_names("straggler.telemetry.options", "TelemetryOptions", "telemetry_options"),
    },
    "straggler.reporting": _names("straggler.reporting.generator", "SCORE_KINDS",
                                  "ReportGenerator", "check_scores_to_compute"),
    # Collective-running glue is not analysis (analysis/ is pure): it completes reports.
    "straggler.analysis.causes": _names("straggler.reporting.annotation", "ReportAnnotator"),
    "straggler.analysis.policy": _names("straggler.reporting.annotation", "apply_policy"),
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


def forward(module: str, name: str) -> Any:
    """``module``'s old attribute ``name``, read from where `MOVED_NAMES` says it lives now.

    For a module's ``__getattr__``: any other name raises the usual ``AttributeError``.
    """
    new = MOVED_NAMES.get(module, {}).get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return getattr(importlib.import_module(new), name)
