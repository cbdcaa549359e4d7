"""`Detector.initialize(telemetry=...)`: one validated options object for GPU telemetry, the
cause rules and the health probe on suspects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .._checks import check_bool, check_seconds
from ..analysis.causes import CauseRules
from ..options import NOT_A_SHORTHAND, to_options
from .nvml import DEFAULT_PERIOD_S

__all__ = ["MIN_PERIOD_S", "TelemetryOptions"]

# The shortest sampling period: below it the sampler thread would hardly ever sleep.
MIN_PERIOD_S = 0.01


@dataclass(frozen=True)
class TelemetryOptions:
    """`Detector.initialize(telemetry=...)`: GPU telemetry, causes and the probe on suspects.

    ``telemetry=True`` (or None) means ``TelemetryOptions()``, ``False`` turns NVML sampling
    off (causes are still given, from scores alone); a dict gives the fields (``rules`` may be a
    dict of `CauseRules` fields too). Converted by `straggler.options.to_options`.
    """

    _SHORTHANDS: ClassVar[str] = "True, False, None"

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
        if check_seconds("period_s", self.period_s) < MIN_PERIOD_S:
            raise ValueError(f"`period_s={self.period_s!r}` must be at least {MIN_PERIOD_S} s: "
                             "a faster sampler thread would keep a CPU core busy (one sample "
                             "costs about 2 ms on an H100)")
        check_bool("probe_suspects", self.probe_suspects)
        if self.rules is not None:  # None: the defaults, kept as None
            object.__setattr__(self, "rules", to_options(CauseRules, self.rules, "rules"))

    @classmethod
    def _from_shorthand(cls, value: Any, name: str,
                        environ: Mapping[str, str] | None) -> dict[str, Any]:
        """``True``/None: the defaults; ``False``: NVML sampling off."""
        if value is None:
            return {}
        return {"enabled": value} if isinstance(value, bool) else NOT_A_SHORTHAND
