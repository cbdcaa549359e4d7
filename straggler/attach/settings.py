"""`AttachSettings`: what an attached job is told through its environment (docs/attach.md).

One reader of the ``STRAGGLER_*`` variables that the attach owns. `straggler run` writes them
(`AttachSettings.to_env`), each worker reads them back (`AttachSettings.from_env`). The report
log and the Prometheus exporter keep their own variables (``STRAGGLER_REPORT_LOG``,
``STRAGGLER_PROMETHEUS_PORT``, read by `straggler.sinks`), so an attached job and a
hand-instrumented one are configured the same way. Imports nothing heavy: it runs in every
Python process of an attached job, the launcher included.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping

from .._checks import check_choice, check_seconds

__all__ = ["ENV_AUTO", "ENV_REPORT_INTERVAL", "ENV_STEP", "ENV_QUIET", "ENV_COMM_TIMEOUT",
           "STEP_MODES", "AttachSettings", "env_flag"]

ENV_AUTO = "STRAGGLER_AUTO"
ENV_REPORT_INTERVAL = "STRAGGLER_REPORT_INTERVAL"
ENV_STEP = "STRAGGLER_STEP"
ENV_QUIET = "STRAGGLER_QUIET"
ENV_COMM_TIMEOUT = "STRAGGLER_COMM_TIMEOUT"
# The step boundary: the optimizer's step, else (no optimizer stepped yet) every collective on
# the default group; "optimizer" or "collective" force one of the two (docs/attach.md).
STEP_MODES = ("auto", "optimizer", "collective")

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def env_flag(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether boolean variable `name` is set to a true value (1/true/yes/on).

    Raises ValueError naming the variable and its value when it is neither true nor false.
    """
    raw = (os.environ if environ is None else environ).get(name, "")
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"`{name}={raw!r}` must be one of 1/true/yes/on or 0/false/no/off")


def _env_seconds(environ: Mapping[str, str], name: str, default: float,
                 allow_zero: bool = False) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    try:
        return check_seconds(name, value, allow_zero=allow_zero)
    except ValueError:
        what = "a number of seconds >= 0" if allow_zero else "a positive number of seconds"
        raise ValueError(f"`{name}={raw!r}` must be {what}") from None


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
        """The settings ``STRAGGLER_*`` says (defaults for unset variables)."""
        env = os.environ if environ is None else environ
        step = env.get(ENV_STEP, "").strip().lower() or "auto"
        if step not in STEP_MODES:
            raise ValueError(f"`{ENV_STEP}={env.get(ENV_STEP)!r}` must be one of "
                             f"{', '.join(STEP_MODES)}")
        return cls(report_interval_s=_env_seconds(env, ENV_REPORT_INTERVAL, 60.0,
                                                  allow_zero=True),
                   step=step, quiet=env_flag(ENV_QUIET, env),
                   comm_timeout_s=_env_seconds(env, ENV_COMM_TIMEOUT, 120.0))

    def to_env(self) -> dict[str, str]:
        """The variables that make a worker read these settings back (with ``STRAGGLER_AUTO``)."""
        return {ENV_AUTO: "1", ENV_REPORT_INTERVAL: f"{self.report_interval_s:g}",
                ENV_STEP: self.step, ENV_QUIET: "1" if self.quiet else "0",
                ENV_COMM_TIMEOUT: f"{self.comm_timeout_s:g}"}
