"""`Detector.initialize(telemetry=...)`: one validated options object for GPU telemetry, the
cause rules and the health probe on suspects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._checks import OptionTypeError, check_bool, check_seconds
from ..analysis.causes import CauseRules
from .nvml import DEFAULT_PERIOD_S

__all__ = ["TelemetryOptions", "telemetry_options"]


@dataclass(frozen=True)
class TelemetryOptions:
    """`Detector.initialize(telemetry=...)`: GPU telemetry, causes and the probe on suspects.

    ``telemetry=True`` means ``TelemetryOptions()``, ``False`` turns NVML sampling off (causes
    are still given, from scores alone).
    """

    enabled: bool = True
    """Sample NVML in a background thread and send the per-report vector."""
    period_s: float = DEFAULT_PERIOD_S
    """Sampling period in seconds."""
    probe_suspects: bool = False
    """After a report whose flagged rank has a slow GPU and no telemetry explanation, run the
    health probe on every rank (a few ms) and refine that rank's cause. Costs one all_reduce of
    one float per report."""
    rules: CauseRules | None = None
    """`straggler.analysis.causes.CauseRules` (None: the defaults)."""

    def __post_init__(self) -> None:
        check_bool("enabled", self.enabled)
        check_seconds("period_s", self.period_s)
        check_bool("probe_suspects", self.probe_suspects)
        if self.rules is not None and not isinstance(self.rules, CauseRules):
            raise OptionTypeError(f"`rules={self.rules!r}` must be a "
                                  "straggler.analysis.causes.CauseRules or None")


def telemetry_options(value: Any) -> TelemetryOptions:
    """`TelemetryOptions` from ``Detector.initialize(telemetry=value)``; `OptionTypeError` (a
    TypeError) for a value of another type."""
    if isinstance(value, TelemetryOptions):
        return value
    if isinstance(value, bool):
        return TelemetryOptions(enabled=value)
    raise OptionTypeError(f"`telemetry={value!r}` must be True, False or a "
                          "straggler.telemetry.TelemetryOptions")
