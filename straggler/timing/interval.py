"""When to report: turns `report_time_interval` (seconds) into a number of iterations.

Every rank must report on the same iteration, and we do not want a collective per step. So
each rank measures its own step time locally; the ranks agree on an iteration count with one
MAX reduction (the fastest rank's estimate, i.e. the most iterations, wins), and then count
iterations. The first agreement happens after `ESTIMATION_ITERS` steps with a dedicated
reduction; later ones ride on the report's own collective (`agree()` is fed the reduced
value), so the interval follows step-time changes at no extra communication cost.

Pure logic: the clock and the reduction are injected, no process group is needed here.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from typing import Any

from .._checks import check_int, check_seconds

__all__ = ["ReportIntervalTracker"]

# Largest interval we ever schedule; keeps a zero step time (a frozen clock) finite.
_MAX_ITERS = 2**31 - 1


class ReportIntervalTracker:
    """Counts iterations and says on which one a report is due (same answer on every rank).

    `clock` returns seconds (default `time.monotonic`); `reduce_max(x)` returns the maximum of
    `x` over the ranks (identity for a single process). NVRx's attribute names are kept:
    `INTERVAL_ESTIMATION_ITERS`, `time_interval` (seconds), `step_times`, `current_iter`,
    `iter_interval`.
    """

    ESTIMATION_ITERS = 16
    INTERVAL_ESTIMATION_ITERS = ESTIMATION_ITERS  # NVRx's name
    WINDOW = 64  # recent step times kept for re-estimation
    OUTLIER = 4.0  # a step over this many times the median is left out of the mean

    def __init__(
        self,
        time_interval_s: float = 60.0,
        profiling_interval: int = 1,
        clock: Callable[[], float] = time.monotonic,
        reduce_max: Callable[[float], float] | None = None,
    ) -> None:
        self.time_interval_s = check_seconds("report_time_interval", time_interval_s,
                                             allow_zero=True)
        self.profiling_interval = check_int("profiling_interval", profiling_interval)
        self._clock = clock
        self._reduce_max = reduce_max if reduce_max is not None else (lambda x: x)
        self.current_iter = 0
        self.iter_interval: int | None = None
        self.next_report_iter: int | None = None
        self._reported_iter = -1  # iteration of the last scheduled report
        self._prev_time: float | None = None
        self._steps = [0.0] * self.WINDOW
        self._num_steps = 0  # total step times recorded (the ring index is this modulo WINDOW)
        if self.time_interval_s == 0:  # nothing to measure: every profiling_interval iterations
            self._set_interval(float(profiling_interval), from_iter=0)

    # -- NVRx's names ----------------------------------------------------------------------
    @property
    def time_interval(self) -> float:
        """NVRx's name of `time_interval_s`: the wished time between reports (seconds)."""
        return self.time_interval_s

    @time_interval.setter
    def time_interval(self, value: float) -> None:
        self.time_interval_s = check_seconds("time_interval", value, allow_zero=True)

    @property
    def step_times(self) -> list[float]:
        """The step times (s) measured for the first estimate; empty once it is made, as in
        NVRx (later estimates use a private window of recent steps)."""
        if self.iter_interval is not None:
            return []
        return self._steps[:min(self._num_steps, self.WINDOW)]

    # -- per step -----------------------------------------------------------------------
    def iter_increase(self) -> None:
        """Call once per training iteration, on every rank."""
        self.current_iter += 1
        now = self._clock()
        if self._prev_time is not None:
            self._steps[self._num_steps % self.WINDOW] = now - self._prev_time
            self._num_steps += 1
        self._prev_time = now
        nxt, every = self.next_report_iter, self.iter_interval
        if nxt is not None and every is not None and self.current_iter > nxt:
            # The due iteration passed without a report (none was asked for): keep the
            # cadence, deterministically on every rank.
            missed = self.current_iter - nxt
            self.next_report_iter = nxt + -(-missed // every) * every
        if self.iter_interval is None and self._num_steps >= self.ESTIMATION_ITERS:
            # The first estimate is NVRx's (the median step: warm-up steps do not count).
            first = self._per_interval(self.median_step_s())
            self._set_interval(self._reduce_max(first), from_iter=None)

    def is_interval_elapsed(self) -> bool:
        """True on the iteration a report is due (until `iter_increase` moves on)."""
        it = self.current_iter
        return it in (self.next_report_iter, self._reported_iter)

    # -- agreement ----------------------------------------------------------------------
    def local_estimate(self) -> float:
        """This rank's wish: iterations per `time_interval_s` from its recent step times.

        From their mean without the outliers (`mean_step_s`), so that the iterations fill the
        interval: on a busy host the median step is well below the mean (a window counted
        with it ran 20 % long here). NaN before any step was measured (the reduction then
        takes the other ranks' value).
        """
        return self._per_interval(self.mean_step_s())

    def _per_interval(self, step_s: float) -> float:
        if self.time_interval_s == 0:
            return float(self.profiling_interval)
        if math.isnan(step_s):
            return math.nan
        if step_s <= 0:
            return float(_MAX_ITERS)
        return self.time_interval_s / step_s

    def median_step_s(self) -> float:
        """The lower median of this rank's recent step times (s); NaN before any was measured."""
        n = min(self._num_steps, self.WINDOW)
        return sorted(self._steps[:n])[(n - 1) // 2] if n else math.nan

    def mean_step_s(self) -> float:
        """The mean of this rank's recent step times (s) without those over `OUTLIER` times
        their median (the report's own step, a checkpoint, a pause); NaN before any step."""
        median = self.median_step_s()
        if math.isnan(median):
            return math.nan
        kept = [s for s in self._steps[:min(self._num_steps, self.WINDOW)]
                if s <= self.OUTLIER * median]
        return sum(kept) / len(kept)

    def agree(self, global_estimate: float) -> None:
        """Adopt the ranks' agreed estimate (the MAX of `local_estimate()`) after a report.

        The next report is then due `iter_interval` iterations after the current one.
        """
        if self.is_interval_elapsed():  # stays "elapsed" for the rest of this iteration
            self._reported_iter = self.current_iter
        if math.isnan(global_estimate):
            global_estimate = self.local_estimate()
        if math.isnan(global_estimate):
            global_estimate = float(self.iter_interval or self.profiling_interval)
        self._set_interval(global_estimate, from_iter=self.current_iter)

    def bring_forward(self, iteration: int) -> None:
        """Make a report due on `iteration` if none is due before (the deadline's agreed
        iteration, an early report); every rank must call it with the same value."""
        nxt = self.next_report_iter
        self.next_report_iter = iteration if nxt is None else min(nxt, iteration)

    def adopt_iteration(self, iteration: int) -> None:
        """Count on from `iteration`, the ranks' agreed count (restored ranks may differ)."""
        self.current_iter = int(iteration)
        nxt, every = self.next_report_iter, self.iter_interval
        if nxt is not None and every is not None and self.current_iter > nxt:
            self.next_report_iter = nxt + -(-(self.current_iter - nxt) // every) * every

    def _set_interval(self, estimate: float, from_iter: int | None) -> None:
        if math.isnan(estimate):
            estimate = float(self.profiling_interval)
        # (+1e-6: 1.0 / 0.04 is 24.999999999999996 in binary floating point)
        iters = int(min(max(estimate + 1e-6, float(self.profiling_interval)), float(_MAX_ITERS)))
        self.iter_interval = iters
        if from_iter is None:
            # First estimate: the next multiple of the interval, as NVRx does (iter % n == 0).
            self.next_report_iter = -(-self.current_iter // iters) * iters
        else:
            self.next_report_iter = from_iter + iters

    # -- persistence --------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The iteration count and the current interval (iterations)."""
        return {"current_iter": self.current_iter, "iter_interval": self.iter_interval}

    @staticmethod
    def check_state(state: Any) -> None:
        """ValueError, naming it, when `state` is not a `state_dict()` (a dict whose
        ``current_iter``, when present, is an integer >= 0)."""
        count = state.get("current_iter", 0) if isinstance(state, dict) else None
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
            raise ValueError(f"`state={state!r:.200}` is not a report interval state: a dict "
                             "whose current_iter is an integer >= 0")

    def load_state_dict(self, state: dict) -> None:
        """Resume counting; the interval is re-measured after a restart (speeds may differ).

        Once counting started (`iter_increase` was called) the count is kept: the ranks agreed
        on it, and a rank changing it alone would report on other iterations than its peers.
        ValueError (`check_state`) when `state` is not a `state_dict()`.
        """
        self.check_state(state)
        if self._prev_time is None:
            self.current_iter = int(state.get("current_iter", 0))
