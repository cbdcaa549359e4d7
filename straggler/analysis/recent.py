"""The recent part of a report window: a straggler that starts inside the window.

A rank that turns slow in the middle of a window slows only the window's later steps: its
median moves by about the slowed share of the slowdown and its fast steps (the window's 5th
percentile, which the verdict's evidence reads) not at all until nearly every step is slow. So
each rank also summarises the last `RECENT_FRACTION` of its window's steps (their median and
5th percentile, `recent_summary`), and the policy compares them with its peers' recent parts
(`recent_log_ratio`): an onset up to about three quarters into a window shows in that window's
report, not only in the next one (docs/policy.md, "Early reports: time to a verdict"). Ranks of
a data-parallel job run the same steps, so their recent parts cover the same iterations. Pure
numpy.
"""

from __future__ import annotations

import math

import numpy as np

from .peers import median_of_others

__all__ = ["MIN_RECENT_STEPS", "RECENT_FRACTION", "recent_count", "recent_log_ratio",
           "recent_summary"]

#: The recent part of a window: its last quarter of steps.
RECENT_FRACTION = 0.25
#: A recent part of fewer steps is not judged (an early report's window of 50 steps has 12).
MIN_RECENT_STEPS = 25


def recent_count(steps: float) -> int:
    """Steps in the recent part of a window of ``steps`` (at least 1; 0 for an empty window)."""
    if not steps > 0 or not math.isfinite(steps):
        return 0
    return max(1, round(RECENT_FRACTION * steps))


def recent_summary(samples: np.ndarray, low_percentile: float) -> tuple[float, float]:
    """The median and the ``low_percentile`` of the recent part of a window's ``samples`` (in
    the order they were taken); NaN for an empty window."""
    k = recent_count(samples.size)
    if k == 0:
        return math.nan, math.nan
    low, med = np.percentile(samples[-k:], (low_percentile, 50.0))
    return float(med), float(low)


def recent_log_ratio(median: np.ndarray, low: np.ndarray, groups: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Each rank's recent part against its peers' recent parts: the log ratio of its recent
    median to the median of its peers' (``ratio``), and the smaller of that and its recent fast
    steps' log ratio (``slower``: interference lengthens some steps, a straggler every step, as
    `straggler.analysis.persistence.fast_step_ratio`). NaN where a rank or all its peers lack
    a recent part; the recent fast steps count where both have them."""
    with np.errstate(invalid="ignore", divide="ignore"):
        med = np.where(median > 0, median, np.nan)
        ratio = np.log(med / median_of_others(med, groups))
        lw = np.where(low > 0, low, np.nan)
        low_ratio = np.log(lw / median_of_others(lw, groups))
    slower = np.where(np.isfinite(low_ratio), np.fmin(ratio, low_ratio), ratio)
    return ratio, slower
