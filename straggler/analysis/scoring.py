"""Score arithmetic: float64 numpy arrays in, scores out. No process group, no torch.

A *timer* is a named thing with a median time per report interval: a ``detection_section`` (host
wall time) or a GPU timer. A score is ``reference / median``: 1.0 means as fast as the reference,
0.5 twice as slow. Conventions shared by every function here:

- A median that is NaN, infinite, zero or negative is *invalid* and treated as absent: it gives
  no score and never enters a reference (NVRx divided by it and raised ``ZeroDivisionError``).
- Medians of several ranks are a matrix ``(ranks, timers)`` with NaN where a rank lacks a timer.
- Relative references need the timer on at least two ranks of the group (one rank alone carries
  no relative information), except in a group of one rank, whose score is 1.0 as in NVRx.

See docs/scores.md for the formulas and every deviation from NVRx.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .. import comm_ops
from .._checks import check_choice, check_int

__all__ = [
    "COMMUNICATION_MARKERS",
    "REFERENCES",
    "BestMedianBaseline",
    "WindowedMinBaseline",
    "gpu_scores",
    "is_communication",
    "pack_for_min_reduce",
    "ratio_scores",
    "reference_from_min_reduce",
    "relative_reference",
    "relative_scores",
    "valid_medians",
]

# Case-insensitive substrings that mark a GPU timer as communication: NCCL/RCCL kernels
# ("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), c10d and DTensor ops ("c10d::allreduce_",
# "_c10d_functional::all_reduce"): the one table, straggler/comm_ops.py. Their time is longest
# on the ranks that wait for a straggler.
COMMUNICATION_MARKERS: tuple[str, ...] = comm_ops.SCORE_MARKERS

# Ways to pick the relative reference among the ranks that have a timer.
REFERENCES: tuple[str, ...] = ("min", "median")


def is_communication(name: str, markers: Iterable[str] = COMMUNICATION_MARKERS) -> bool:
    """True when a GPU timer's name contains one of ``markers`` (case-insensitive)."""
    pattern = _marker_pattern(tuple(markers))
    return pattern is not None and pattern.search(name) is not None


@functools.lru_cache(maxsize=8)
def _marker_pattern(markers: tuple[str, ...]) -> re.Pattern[str] | None:
    if not markers:
        return None
    return re.compile("|".join(re.escape(m) for m in markers), re.IGNORECASE)


def valid_medians(medians: npt.ArrayLike) -> np.ndarray:
    """Medians as float64 with every invalid entry (NaN, inf, <= 0) replaced by NaN."""
    values = np.array(medians, dtype=np.float64)
    values[~(np.isfinite(values) & (values > 0))] = np.nan
    return values


def relative_reference(medians: npt.ArrayLike, method: str = "min") -> np.ndarray:
    """Per-timer reference from a ``(ranks, timers)`` matrix of medians.

    ``method="min"`` (NVRx): the smallest valid median. ``"median"``: the median of the valid
    medians, robust to one unusually fast rank. NaN where fewer than ``min(2, ranks)`` ranks have a
    valid median.
    """
    check_choice("relative_reference", method, REFERENCES)
    values = valid_medians(medians)
    if values.ndim != 2:
        raise ValueError(f"medians must be a (ranks, timers) matrix, got shape {values.shape}")
    n_ranks, n_timers = values.shape
    present = np.isfinite(values)
    enough = present.sum(axis=0) >= min(2, n_ranks)
    reference = np.full(n_timers, np.nan)
    if enough.any():
        picked = values[:, enough]
        reduce = np.nanmin if method == "min" else np.nanmedian
        reference[enough] = reduce(picked, axis=0)
    return reference


def ratio_scores(reference: npt.ArrayLike, medians: npt.ArrayLike) -> np.ndarray:
    """``reference / median`` elementwise (broadcasting), NaN where either side is invalid."""
    ref = valid_medians(reference)
    med = valid_medians(medians)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ref / med


def gpu_scores(ratios: npt.ArrayLike, weights: npt.ArrayLike) -> np.ndarray:
    """Weighted mean of per-timer ratios along the last axis (one score per rank).

    ``weights`` are the rank's own time in each timer (``NUM * AVG``), as in NVRx: a slow rank
    weights its slow timers more. Only timers with a finite ratio and a finite positive weight
    count; a rank with none of them scores NaN.
    """
    r = np.asarray(ratios, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    r, w = np.broadcast_arrays(r, w)
    use = np.isfinite(r) & np.isfinite(w) & (w > 0)
    w_used = np.where(use, w, 0.0)
    total = w_used.sum(axis=-1)
    weighted = np.where(use, r, 0.0) * w_used
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, weighted.sum(axis=-1) / np.where(total > 0, total, 1.0),
                        np.nan)


def relative_scores(medians: npt.ArrayLike, weights: npt.ArrayLike | None = None,
                    method: str = "min") -> tuple[np.ndarray, np.ndarray | None]:
    """Relative scores of every rank from ``(ranks, timers)`` matrices, in one call.

    Returns the ``(ranks, timers)`` per-timer ratios (section scores) and, when ``weights`` is
    given, the ``(ranks,)`` weighted GPU scores. The distributed report computes the same numbers
    one rank at a time; this form serves tests and regrouping (e.g. scoring within peer groups).
    """
    reference = relative_reference(medians, method)
    ratios = ratio_scores(reference[np.newaxis, :], medians)
    return ratios, None if weights is None else gpu_scores(ratios, weights)


def pack_for_min_reduce(medians: npt.ArrayLike, group_rank: int) -> np.ndarray:
    """One rank's contribution to the ``min`` reference, reduced with a single all_reduce(MIN).

    Layout ``[median | group_rank | -group_rank]`` per timer (``3 * timers`` values), ``+inf``
    where the median is invalid. After the MIN reduction the three blocks hold the smallest
    median, the smallest and minus the largest group rank that has the timer: at least two ranks
    have it exactly when those ranks differ. This saves a second (SUM) collective for the count.
    """
    med = valid_medians(medians)
    present = np.isfinite(med)
    rank = float(group_rank)
    return np.concatenate([np.where(present, med, np.inf), np.where(present, rank, np.inf),
                           np.where(present, -rank, np.inf)])


def reference_from_min_reduce(reduced: npt.ArrayLike, group_size: int) -> np.ndarray:
    """Per-timer ``min`` reference from the reduced `pack_for_min_reduce` vector."""
    values = np.asarray(reduced, dtype=np.float64)
    n = values.shape[0] // 3
    smallest, lowest_rank, minus_highest_rank = values[:n], values[n:2 * n], values[2 * n:]
    if group_size > 1:
        enough = np.isfinite(lowest_rank) & (lowest_rank < -minus_highest_rank)
    else:
        enough = np.isfinite(lowest_rank)
    return np.where(enough, smallest, np.nan)


def _stale_names(last_update: dict[str, int], cutoff: float, max_names: int) -> list[str]:
    """Names last updated at or before ``cutoff``, plus the least recently updated ones beyond
    ``max_names``; ``last_update`` is ordered least recently updated first."""
    excess = len(last_update) - max_names
    stale: list[str] = []
    for name, last in last_update.items():
        if last > cutoff and len(stale) >= excess:
            break  # ordered by last update: the rest are newer
        stale.append(name)
    return stale


class WindowedMinBaseline:
    """A rank's own reference per timer: the best valid median of its last ``window`` reports
    that at least ``support`` of them reached (the ``support``-th smallest; 1: the smallest).

    NVRx keeps the smallest median ever seen, so one unusually fast interval (or a faster phase
    early in training) lowers every later individual score for good. A window lets the reference
    recover: after ``window`` reports the old minimum has left it. ``support=2`` (the report
    generator's default) also keeps a single fast report, such as a warm-up, from being the
    reference at all. The current report is part of the window and caps the reference, so a
    score is at most 1.0 and a timer's first report scores exactly 1.0. Reports in which a timer
    is absent (or invalid) do not advance that timer's window.
    """

    def __init__(self, window: int, max_names: int = 4096, support: int = 1) -> None:
        self.window = check_int("individual_window", window)
        self.max_names = check_int("max_names", max_names)
        self.support = check_int("individual_support", support)
        self._history: dict[str, deque[float]] = {}
        self._updates = 0
        self._last_update: dict[str, int] = {}  # least recently updated first

    def forget_stale(self, window: int | None = None) -> int:
        """Forget timers not updated in the last ``window`` updates, and the least recently
        updated ones beyond ``max_names``; returns how many."""
        cutoff = self._updates - (self.window if window is None else window)
        stale = _stale_names(self._last_update, cutoff, self.max_names)
        for name in stale:
            del self._last_update[name]
            self._history.pop(name, None)
        return len(stale)

    def update(self, names: Sequence[str], medians: npt.ArrayLike) -> np.ndarray:
        """Add this report's medians and return the references, NaN for invalid medians."""
        values = _medians_for(names, medians)
        reference = [math.nan] * len(names)
        self._updates += 1
        last = self._last_update
        for i, (name, value) in enumerate(zip(names, values.tolist(), strict=True)):
            if math.isnan(value):
                continue
            history = self._history.get(name)
            if history is None:
                history = self._history[name] = deque(maxlen=self.window)
            history.append(value)
            if self.support == 1:
                reference[i] = min(history)
            else:  # the support-th smallest, at most the current median (a score <= 1)
                kth = heapq.nsmallest(min(self.support, len(history)), history)[-1]
                reference[i] = min(kth, value)
            last.pop(name, None)
            last[name] = self._updates
        if len(self._history) > min(4 * len(names) + 256, self.max_names):  # name churn
            self.forget_stale()
        return np.array(reference, dtype=np.float64)

    def state_dict(self) -> dict[str, list[float]]:
        """Each timer's recent medians, oldest first."""
        return {name: list(history) for name, history in self._history.items()}

    def load_state_dict(self, state: Mapping[str, Sequence[float]]) -> None:
        """Restore `state_dict` output; a longer history than ``window`` keeps its newest part."""
        history = {}
        for name, values in state.items():
            kept = valid_medians(list(values))
            history[str(name)] = deque((float(v) for v in kept if np.isfinite(v)),
                                       maxlen=self.window)
        self._history = history
        self._last_update = dict.fromkeys(history, self._updates)


def _medians_for(names: Sequence[str], medians: npt.ArrayLike) -> np.ndarray:
    """`medians` as valid float64 medians, one per name (ValueError otherwise)."""
    values = valid_medians(medians)
    if values.shape != (len(names),):
        raise ValueError(f"{len(names)} names but medians of shape {values.shape}")
    return values


class BestMedianBaseline:
    """NVRx's individual reference per timer: the smallest valid median of every report so far.

    The current report is included, so a score is at most 1.0 and a timer's first report scores
    exactly 1.0. The reference never recovers from one unusually fast report (that is NVRx's
    arithmetic, kept for NVRx's field names; `WindowedMinBaseline` is the robust one). Memory:
    one float per timer, at most ``max_names`` timers (the least recently updated are forgotten
    first); invalid medians give NaN and never enter the reference.
    """

    def __init__(self, max_names: int = 4096) -> None:
        self.max_names = check_int("max_names", max_names)
        self._best: dict[str, float] = {}  # least recently updated first
        self._updates = 0
        self._last_update: dict[str, int] = {}

    def update(self, names: Sequence[str], medians: npt.ArrayLike) -> np.ndarray:
        """Add this report's medians and return the references, NaN for invalid medians."""
        values = _medians_for(names, medians)
        reference = [math.nan] * len(names)
        self._updates += 1
        best, last = self._best, self._last_update
        for i, (name, value) in enumerate(zip(names, values.tolist(), strict=True)):
            if math.isnan(value):
                continue
            reference[i] = best[name] = min(best.get(name, math.inf), value)
            last.pop(name, None)
            last[name] = self._updates
        if len(best) > self.max_names:
            self.forget_stale(None)
        return np.array(reference, dtype=np.float64)

    def forget_stale(self, window: int | None) -> int:
        """Forget timers not updated in the last ``window`` updates (None: none for age), and the
        least recently updated ones beyond ``max_names``; returns how many."""
        cutoff = -math.inf if window is None else self._updates - window
        stale = _stale_names(self._last_update, cutoff, self.max_names)
        for name in stale:
            del self._last_update[name]
            self._best.pop(name, None)
        return len(stale)

    def state_dict(self) -> dict[str, float]:
        """Each timer's reference (its best median so far)."""
        return dict(self._best)

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        """Restore `state_dict` output (invalid values are dropped)."""
        best = {str(name): float(v) for name, v in state.items()
                if math.isfinite(float(v)) and float(v) > 0}
        self._best = best
        self._last_update = dict.fromkeys(best, self._updates)
