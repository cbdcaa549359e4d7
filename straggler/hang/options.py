"""`HangOptions`: ``Detector.initialize(hang_timeout_s=, hang_action=)``, checked once, and the
timeout in force (`HangTimeout`: a fixed value, or learned from the step times like FT's).

``hang_timeout_s``:

- ``"auto"`` (default): on when ``torch.distributed`` runs more than one rank. The timeout is
  `AUTO_INITIAL_S` until `LEARN_AFTER_STEPS` steps were seen, then `AUTO_FACTOR` x the longest
  step seen so far, never below `AUTO_MIN_S`; always at most half the timeouts that kill the
  job (the default process group's timeout, FT's section timeouts), so that the hang is named
  before they act. The environment variable ``STRAGGLER_HANG_TIMEOUT`` (what ``straggler run
  --hang-timeout`` sets) overrides ``"auto"``: seconds, or ``off``.
- a number of seconds: fixed (still capped by the job's timeouts, with a warning).
- ``None``/``False``/``0``/``"off"``: off.

``hang_action``: ``"none"`` (report only) or ``"exit"``: the ranks named as culprits exit with
`EXIT_CODE` (after asking ``ft_launcher`` to exclude their node when FT is on), so that the
launcher restarts the job without them (docs/hang.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from .. import _env
from .._checks import check_choice, check_seconds
from .._constants import HANG_ACTIONS
from ..options import NOT_A_SHORTHAND

__all__ = ["HangOptions", "HangTimeout", "EXIT_CODE", "HANG_ACTIONS",
           "AUTO_INITIAL_S", "AUTO_MIN_S", "AUTO_FACTOR", "LEARN_AFTER_STEPS", "ENV_TIMEOUT"]

EXIT_CODE = 75  # a culprit's exit status with hang_action="exit" (EX_TEMPFAIL: try again)
ENV_TIMEOUT = _env.HANG_TIMEOUT.name
AUTO_INITIAL_S = 300.0  # until steps are seen: the first step, compilation, loading
AUTO_MIN_S = 60.0
AUTO_FACTOR = 10.0  # x the longest step: evaluation and checkpoint skew stay under it
LEARN_AFTER_STEPS = 16  # Megatron-Bridge's MIN_ITERS_FOR_STEP_TIMEOUT_UPDATE


@dataclasses.dataclass(frozen=True)
class HangOptions:
    """Hang detection's settings (docs/hang.md).

    Args:
        timeout_s: fixed timeout in seconds, or None for the learned one ("auto").
        action: ``"none"`` or ``"exit"``.
        period_s: the watchdog's tick; progress is published every ``period_s`` at the most
            (more rarely at scale: see `publish_interval_s`).
        max_store_qps: the store writes per second that all ranks together may spend on
            progress; the publish interval stretches to keep under it.
        stack_bytes: the longest stack a rank publishes (innermost frames kept).
        store_timeout_s: the timeout of every store operation.

    ``initialize(hang_timeout_s=...)`` (converted by `straggler.options.to_options`, with
    ``hang_action`` as ``action``): the shorthands of the module docstring, or a dict of these
    fields.
    """

    _SHORTHANDS: ClassVar[str] = "seconds, 'auto', 'off', None"

    timeout_s: float | None = None
    action: str = "none"
    period_s: float = 1.0
    max_store_qps: float = 2000.0
    stack_bytes: int = 6000
    store_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if self.timeout_s is not None:
            check_seconds("hang_timeout_s", self.timeout_s)
        check_choice("hang_action", self.action, HANG_ACTIONS)
        check_seconds("period_s", self.period_s)
        check_seconds("max_store_qps", self.max_store_qps)
        check_seconds("store_timeout_s", self.store_timeout_s)

    @classmethod
    def _from_shorthand(cls, value: Any, name: str,
                        environ: Mapping[str, str] | None) -> dict[str, Any] | None:
        """Seconds: fixed; ``"auto"``: learned, unless ``$STRAGGLER_HANG_TIMEOUT`` says
        seconds or ``off``; None, False, 0 or ``"off"``: off."""
        if value is None or value is False or value == "off" or (
                isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
            return None
        if value == "auto":
            from_env = _env.HANG_TIMEOUT.read(environ)  # ValueError naming a malformed value
            if from_env == "off":
                return None
            return {} if from_env in (None, "auto") else {"timeout_s": from_env}
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return NOT_A_SHORTHAND
        return {"timeout_s": check_seconds(name, value)}

    def publish_interval_s(self, world_size: int) -> float:
        """Seconds between two progress writes of one rank: ``period_s``, stretched so that
        ``world_size`` ranks stay under ``max_store_qps`` writes per second together."""
        return max(self.period_s, world_size / self.max_store_qps)


class HangTimeout:
    """The timeout in force: fixed, or learned from step times (see the module docstring).

    `observe_step(duration_s)` is called by the watchdog with the time between two step counts
    it saw; `cap_s` is the job's own timeout (process group, FT) or inf.
    """

    def __init__(self, fixed_s: float | None) -> None:
        self.fixed_s = fixed_s
        self.steps = 0
        self.longest_step_s = 0.0
        self.cap_s = math.inf

    def observe_step(self, duration_s: float, steps: int = 1) -> None:
        """Learn from `steps` steps that took `duration_s` together."""
        if steps <= 0 or not math.isfinite(duration_s) or duration_s < 0:
            return
        self.steps += steps
        if self.steps > 1:  # the first step (compilation, warm-up) is not a step time
            self.longest_step_s = max(self.longest_step_s, duration_s / steps)

    @property
    def learned(self) -> bool:
        """Whether the automatic timeout has seen enough steps to follow them."""
        return self.steps >= LEARN_AFTER_STEPS

    @property
    def value_s(self) -> float:
        """Seconds without progress that make a hang."""
        if self.fixed_s is not None:
            base = self.fixed_s
        elif self.learned:
            base = max(AUTO_MIN_S, AUTO_FACTOR * self.longest_step_s)
        else:
            base = AUTO_INITIAL_S
        return min(base, 0.5 * self.cap_s)
