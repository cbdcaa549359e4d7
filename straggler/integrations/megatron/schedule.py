"""When the ranks of a hand-written loop meet, and whether they report then.

The counting of steps, the window of step times and the due iteration are
`straggler.timing.interval.ReportIntervalTracker`'s, as for the `Detector`'s own reports; what
differs is who decides the interval: here the reporting rank plans it from its own step times,
the time since the last report and the controller's poll period, and broadcasts it (with the
controller's settings) in the manager's one sync-point broadcast.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from ...timing.interval import _MAX_ITERS, ReportIntervalTracker
from ..controller import ControlState

__all__ = ["ReportSchedule", "encode_plan", "decode_plan", "PLAN_WIDTH"]

# The vector broadcast at a sync point: a marker (catches a peer that is somewhere else), the
# report flag, the new state and the steps to the next meeting.
_MARKER = 20251122.0
PLAN_WIDTH = 7


class ReportSchedule:
    """Decides, on the reporting rank, when the ranks meet next and whether to report then.

    Every rank counts its calls to :meth:`tick`; a meeting ("sync point") is due when the count
    reaches the agreed target. At a sync point the reporting rank calls :meth:`plan`, which says
    whether the interval that just ended is reported and how many steps until the next meeting;
    the result is broadcast, and every rank calls :meth:`agree` with it. The first meeting is
    after ``first_sync`` steps (as the tracker's first estimate, and NVRx's); later ones are
    spaced by ``report_time_interval`` divided by the median recent step time. Pure logic: the
    clock is injected.
    """

    FIRST_SYNC = ReportIntervalTracker.ESTIMATION_ITERS
    MAX_STEPS = _MAX_ITERS

    def __init__(self, min_steps: int = 1, clock: Callable[[], float] = time.monotonic,
                 first_sync: int = FIRST_SYNC) -> None:
        self._clock = clock
        # A zero time interval: the tracker counts steps and keeps their times, and meets when
        # told by `agree` (never by its own estimate); `min_steps` is its floor.
        self._tracker = ReportIntervalTracker(0.0, max(1, int(min_steps)), clock=clock)
        self._tracker.agree(float(max(1, int(first_sync))))
        self._window_start = clock()

    @property
    def count(self) -> int:
        """Steps counted so far."""
        return self._tracker.current_iter

    def tick(self) -> bool:
        """Count one step; True when this step is a sync point."""
        self._tracker.iter_increase()
        return self._tracker.is_interval_elapsed()

    def plan(self, interval_s: float, timing: bool,
             max_wait_s: float | None = None) -> tuple[bool, int]:
        """At a sync point, on the reporting rank: (report now?, steps until the next meeting).

        With ``max_wait_s`` the ranks meet at least that often (to hear the controller), even
        when the report interval is longer; such meetings are not reports.
        """
        now = self._clock()
        step_s = self._tracker.median_step_s()
        elapsed = now - self._window_start
        report = timing and elapsed >= 0.9 * interval_s
        remaining = interval_s if (report or not timing) else interval_s - elapsed
        if max_wait_s is not None:
            remaining = min(remaining, max_wait_s)
        steps = math.ceil(remaining / step_s) if step_s > 0 else self.MAX_STEPS  # NaN: none yet
        return report, int(min(self.MAX_STEPS, max(self._tracker.profiling_interval, steps)))

    def agree(self, report: bool, steps: int, timing_started: bool = False) -> None:
        """Apply the broadcast plan; restart the window after a report or when timing (re)starts."""
        self._tracker.agree(float(max(1, int(steps))))
        if report or timing_started:
            self._window_start = self._clock()


def encode_plan(report_now: bool, state: ControlState, steps: int) -> list[float]:
    """The vector the reporting rank broadcasts at a sync point (`PLAN_WIDTH` floats)."""
    return [_MARKER, float(report_now), float(state.enabled), state.gpu_relative_perf_threshold,
            state.gpu_individual_perf_threshold, state.report_time_interval, float(steps)]


def decode_plan(vector: list[float]) -> tuple[bool, ControlState, int]:
    """(report now?, the state every rank applies, steps to the next meeting) from `vector`.

    RuntimeError when it is not a plan (a peer that is somewhere else in its loop).
    """
    if vector[0] != _MARKER:
        raise RuntimeError(f"sync point mismatch: got {vector!r} from the reporting rank")
    state = ControlState(enabled=bool(vector[2]), gpu_relative_perf_threshold=vector[3],
                         gpu_individual_perf_threshold=vector[4],
                         report_time_interval=vector[5])
    return bool(vector[1]), state, int(vector[6])
