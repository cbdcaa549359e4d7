"""`AttachSettings`: what an attached job is told through its environment (docs/attach.md).

The variables are read by the one reader of the environment (`straggler._env`: ``AUTO``,
``REPORT_INTERVAL``, ``STEP``, ``QUIET``, ``COMM_TIMEOUT``). `straggler run` writes them
(`AttachSettings.to_env`), each worker reads them back (`AttachSettings.from_env`). The report
log and the Prometheus exporter keep their own variables (``STRAGGLER_REPORT_LOG``,
``STRAGGLER_PROMETHEUS_PORT``, read by `straggler.sinks`), so an attached job and a
hand-instrumented one are configured the same way. Imports nothing heavy: it runs in every
Python process of an attached job, the launcher included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from .. import _env
from .._checks import check_choice, check_seconds
from .._env import STEP_MODES

__all__ = ["STEP_MODES", "AttachSettings"]


@dataclasses.dataclass(frozen=True)
class AttachSettings:
    """The attach's options, validated when built (ValueError names the bad value)."""

    report_interval_s: float = 60.0
    """Seconds between reports (`Detector.initialize`'s ``report_time_interval``)."""
    step: str = "auto"
    """The step boundary: ``auto``, ``optimizer`` or ``collective`` (`STEP_MODES`)."""
    quiet: bool = False
    """No per-report line on the reporting rank's stderr."""
    comm_timeout_s: float = 120.0
    """Timeout of the detector's own collectives (``comm_timeout_s``)."""

    def __post_init__(self) -> None:
        check_seconds("report_interval", self.report_interval_s, allow_zero=True)
        check_choice("step", self.step, STEP_MODES)
        check_seconds("comm_timeout", self.comm_timeout_s)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AttachSettings:
        """The settings ``STRAGGLER_*`` says (defaults for unset variables); ValueError names a
        malformed variable."""
        return cls(report_interval_s=_env.REPORT_INTERVAL.read(environ),
                   step=_env.STEP.read(environ), quiet=_env.QUIET.read(environ),
                   comm_timeout_s=_env.COMM_TIMEOUT.read(environ))

    def to_env(self) -> dict[str, str]:
        """The variables that make a worker read these settings back (with ``STRAGGLER_AUTO``)."""
        return {_env.AUTO.name: "1", _env.REPORT_INTERVAL.name: f"{self.report_interval_s:g}",
                _env.STEP.name: self.step, _env.QUIET.name: "1" if self.quiet else "0",
                _env.COMM_TIMEOUT.name: f"{self.comm_timeout_s:g}"}
