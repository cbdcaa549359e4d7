"""What the FT bridge can be asked to do: section names, choices and the validated options."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from typing import Any

from ..._checks import check_bool, check_choice, check_int, check_name
from ..._constants import FT_SECTIONS_MODES

__all__ = ["FTOptions", "FT_SECTIONS_MODES", "STRAGGLER_ACTIONS", "FAULT_TYPES", "SETUP", "STEP",
           "CHECKPOINTING"]

STRAGGLER_ACTIONS = ("none", "exclude_node", "shutdown")
FAULT_TYPES = ("rank_hung", "rank_killed", "random")

# NVRx's section names, as Megatron-Bridge configures them in ``--ft-rank-section-timeouts``.
SETUP, STEP, CHECKPOINTING = "setup", "step", "checkpointing"


@dataclasses.dataclass(frozen=True)
class FTOptions:
    """``Detector.initialize(ft_options=...)``: a dict of these fields, this object, or None
    (the defaults); converted by `straggler.options.to_options`.

    Validated when built; see `FTBridge` for what each field does.
    """

    step_section: str | None = None
    """Our per-iteration detection section that holds FT's ``step`` (None: the first
    outermost section entered)."""
    state_path: Any = None
    """``ft_state.json`` or its directory (default ``$STRAGGLER_FT_STATE``)."""
    calc_timeouts: bool = True
    """Learn timeouts at report points and at a clean shutdown."""
    timeouts_from_stats: bool = False
    """Learn ``step`` from our statistics instead of NVRx's calculation."""
    warmup_iters: int | None = None
    """Steps kept out of ``step`` (None: the launcher's ``num_warmup_iterations``, else 1)."""
    straggler_action: str = "none"
    """What `FTBridge.act_on_stragglers` asks of the launcher (`STRAGGLER_ACTIONS`)."""
    client: Any = None
    """An existing ``RankMonitorClient`` (or compatible object) to drive."""
    reduce_max: Callable[[Any], Any] | None = None
    """MAX-reduces a CPU float64 tensor over all ranks (default: the default process group)."""
    clock: Callable[[], float] = time.monotonic
    """Seconds for the ``step`` times `timeouts_from_stats` learns from (tests pass a fake)."""

    def __post_init__(self) -> None:
        check_name("step_section", self.step_section, optional=True)
        check_bool("calc_timeouts", self.calc_timeouts)
        check_bool("timeouts_from_stats", self.timeouts_from_stats)
        if self.warmup_iters is not None:
            check_int("warmup_iters", self.warmup_iters, 0)
        if self.state_path is not None and not isinstance(self.state_path, (str, os.PathLike)):
            raise ValueError(f"`state_path={self.state_path!r}` must be a path or None")
        if self.reduce_max is not None and not callable(self.reduce_max):
            raise ValueError(f"`reduce_max={self.reduce_max!r}` must be callable or None")
        if not callable(self.clock):
            raise ValueError(f"`clock={self.clock!r}` must be callable (returning seconds)")
        check_choice("straggler_action", self.straggler_action, STRAGGLER_ACTIONS)
