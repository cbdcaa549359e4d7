"""A rank's own time per step: the time it spends outside its collectives.

In a synchronous job every rank's step lasts as long as the slowest one's; what differs is how
the step splits between the rank's own work (compute, data loading, Python between sections,
host stalls) and waiting for the others in collectives. A rank that is slow outside every
`detection_section` has more own time per step than its peers, whatever the scheduler does with
the waits. The collective observer notes each **gap**: from the moment none of this rank's
collectives (groups of 2 or more ranks) is in flight to its next arrival, and sums them per
training step (the detector marks each step; a step without collectives adds to the next one:
`straggler.timing.collectives.take_own_time`), and the same steps' own time outside the timed
sections (each section's part inside the gaps taken off: the sections judge their own time).
Each rank sends the same summary of the latter per-step samples as of a section (`summarize`,
`FIELDS` numbers): the steps, the median, the quartiles, the 5th percentile (its fast steps),
its recent part, and its time in sections per step. The policy judges them like a section's
times, each plus the ranks' median time in sections (metric `METRIC`, `policy_inputs`): the own
time with the rank's sections' noise out of it, at the own time's scale; `slow_between` says,
for a confirmed rank, how much more own time it takes than its peers and what that costs the
job.

Measured on live 3-rank gloo runs (benchmarks/outside_capture.py, docs/culprits.md): a rank
doing 20 % more matrix work outside its section has 10-12 % more own time at its fast steps (5th
percentile) than its peers, with every core busy too, while the waits (who arrived last, the
mean or median wait) do not tell it apart. A gap starts when the caller returns from the
collective's ``wait()`` (or, when nobody waits on the Work, at its completion): the caller's
wake-up after gloo's worker finished is the collective's time, not the rank's own.

Why the trimmed mean (live runs, docs/culprits.md "Which statistic"): a healthy rank's own time
per step is skewed (a descheduled step is long, none is much shorter than the work), so the
mean of its lower-middle steps varies between windows 0.78-0.97 times as much as the median
does, a straggler shifts it as much, and the window's quartiles predict its error with the
factor `SE_TRIMMED` (1.25 for the median). It matters most in the early reports' short windows.
With the sections' time taken off, a rank doing 10 % more work outside its section is confirmed
within 3 reports in 42 of 50 live runs (27 of 30 at load 4-14; before: 7 of 20).

Pure numpy: no process group, no torch.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from .rank_table import RankTable
from .recent import recent_count, recent_summary

__all__ = ["FIELDS", "LOW_PERCENTILE", "METRIC", "MIN_STEPS", "SECTIONS_SHARE", "SE_TRIMMED",
           "TRIM", "OwnTime", "OwnTimeTable", "SlowBetween", "confirmed_between", "policy_inputs",
           "sections_level", "slow_between", "summarize", "trimmed_mean"]

METRIC = "between_collectives"
"""The policy's metric (``RankState.reasons`` key) for a rank's own time per step."""
FIELDS = 10
"""Per rank: steps, median, lower and upper quartile, 5th percentile, the recent part's median
and 5th percentile, the lower-trimmed mean of the window and of its recent part (`TRIM`) of its
own time per step outside its timed sections (ms), and the time in those sections inside its
gaps per step (the median, ms; 0 without sections)."""
LOW_PERCENTILE = 5.0
"""The fast steps' percentile (as `straggler.timing.registry.LOW_PERCENTILE`)."""
MIN_STEPS = 20
"""A window with fewer per-step samples sends none."""
TRIM = (0.10, 0.60)
"""The lower-trimmed mean's share of the sorted steps: from the 10th to the 60th percentile."""
SE_TRIMMED = 1.0
"""Its standard error factor over the quartiles' sigma (``log(q75 / q25) / 1.349 / sqrt(steps)``;
a median's is 1.25). Measured on live clean 3-rank runs (docs/culprits.md): windows of 50-100
steps vary 0.96-1.1 times what it gives; longer ones more (ranks keep offsets of about 1 % for
seconds), which the policy's noise between reports covers."""
SECTIONS_SHARE = 1.0
"""The share of the ranks' median time in sections (`sections_level`) the policy adds to each
rank's own time outside its sections: 1.0 judges it at the own time's scale (the effect-size
gate is a share of the own time a step), 0 on the time outside the sections alone."""
_IQR_SIGMAS = 1.349


@dataclasses.dataclass(frozen=True)
class OwnTime:
    """One rank's own time per step in a report window (ms): the time it spent outside its
    collectives in a step, summarised over ``steps`` steps."""

    steps: int
    median_ms: float
    q25_ms: float
    q75_ms: float
    low_ms: float
    recent_median_ms: float
    recent_low_ms: float
    trimmed_ms: float = math.nan
    """The lower-trimmed mean (`TRIM`): what the policy judges (with `sections_ms`)."""
    recent_trimmed_ms: float = math.nan
    sections_ms: float = math.nan
    """Its timed sections' time inside its gaps per step (the median; 0 without sections, NaN:
    not measured): its own time per step is about this plus the fields above."""


def trimmed_mean(samples: np.ndarray) -> float:
    """The mean of ``samples`` between their `TRIM` quantiles (at least one sample; NaN for
    none)."""
    n = samples.size
    if n == 0:
        return math.nan
    lo = int(TRIM[0] * n)
    return float(np.sort(samples)[lo:max(lo + 1, int(TRIM[1] * n))].mean())


def summarize(steps_s: np.ndarray, outside_s: np.ndarray | None = None) -> np.ndarray:
    """This rank's `FIELDS` numbers from its window's own time per step (s, oldest first) and
    the same steps' own time outside its timed sections (``outside_s``; None: unknown, the own
    time is summarised with ``sections_ms`` NaN); NaN with fewer than `MIN_STEPS` steps."""
    out = np.full(FIELDS, math.nan)
    per_step = np.asarray(steps_s, dtype=np.float64) * 1e3
    if per_step.size < MIN_STEPS:
        return out
    if outside_s is not None and len(outside_s) == per_step.size:
        outside = np.asarray(outside_s, dtype=np.float64) * 1e3
        out[9] = float(np.median(per_step - outside))
        per_step = outside
    low, q25, med, q75 = np.percentile(per_step, (LOW_PERCENTILE, 25.0, 50.0, 75.0))
    out[:5] = (per_step.size, med, q25, q75, low)
    out[5:7] = recent_summary(per_step, LOW_PERCENTILE)
    out[7] = trimmed_mean(per_step)
    out[8] = trimmed_mean(per_step[-recent_count(per_step.size):])
    return out


class OwnTimeTable(RankTable[OwnTime]):
    """``{global rank: OwnTime}`` over one ``(ranks, FIELDS)`` array (`OwnTime` made when
    looked up); ranks without a summary are left out."""

    def __init__(self, ranks: Sequence[int], rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.float64).reshape(len(ranks), FIELDS)
        keep = rows[:, 0] > 0
        self._set_ranks(np.asarray(ranks, dtype=np.int64)[keep])
        self.rows = rows[keep]

    def aligned(self, ranks: Sequence[int] | np.ndarray) -> np.ndarray:
        """The ``(len(ranks), FIELDS)`` rows aligned with ``ranks``, NaN where a rank has none."""
        found, at = self._rows_of(ranks)
        out = np.full((len(found), FIELDS), math.nan)
        out[found] = self.rows[at[found]]
        return out

    def __getitem__(self, rank: int) -> OwnTime:
        v = self.rows[self._row(rank)]
        return OwnTime(int(v[0]), *map(float, v[1:]))


def sections_level(sections_ms: np.ndarray | Sequence[float]) -> float:
    """The time in sections per step every rank is judged with (ms): `SECTIONS_SHARE` of the
    median of the ranks' ``sections_ms`` (0 when none has one)."""
    v = np.asarray(sections_ms, dtype=np.float64)
    v = v[np.isfinite(v)]
    return SECTIONS_SHARE * max(0.0, float(np.median(v))) if v.size else 0.0


def policy_inputs(table: Mapping[int, OwnTime] | None, ranks: np.ndarray
                  ) -> tuple[dict[str, np.ndarray], dict[str, float], dict[str, np.ndarray],
                             dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The policy's inputs for `METRIC`, aligned with ``ranks``: times (the lower-trimmed mean),
    steps (the fewest any rank had), the window's standard error of each log time (from its
    quartiles, `SE_TRIMMED`), the fast steps and the recent part (its trimmed mean and 5th
    percentile); all empty without a table.

    Each is the own time outside the sections plus the ranks' median time in sections
    (`sections_level`): a rank's own time with its sections' time replaced by its peers'. The
    sections judge their own time; this takes their noise out of the own time and keeps its
    scale, so that the effect-size gate still reads "a share of the own time per step" (a few
    µs of Python more on rank 0 is not a straggler when its own time is mostly sections)."""
    if not table:
        return {}, {}, {}, {}, {}
    rows = (table.aligned(ranks) if isinstance(table, OwnTimeTable)
            else np.array([[*dataclasses.astuple(table[int(r)])] if int(r) in table
                           else [math.nan] * FIELDS for r in ranks], dtype=np.float64))
    steps = rows[:, 0]
    if not np.isfinite(steps).any():
        return {}, {}, {}, {}, {}
    n = float(np.nanmin(steps))
    level = sections_level(rows[:, 9])
    times = rows[:, :9].copy()
    times[:, 1:] += level
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (times[:, 2] > 0) & (times[:, 3] >= times[:, 2])
        sigma = np.where(ok, np.log(times[:, 3] / np.where(ok, times[:, 2], 1.0)), np.nan)
        spread = SE_TRIMMED * sigma / _IQR_SIGMAS / np.sqrt(np.where(steps > 0, steps, np.nan))
    return ({METRIC: times[:, 7]}, {METRIC: n}, {METRIC: spread}, {METRIC: times[:, 4]},
            {METRIC: (times[:, 8], times[:, 6])})


@dataclasses.dataclass(frozen=True)
class SlowBetween:
    """A rank whose own time per step exceeds its peers': what it costs the job.

    Attributes:
        rank: the global rank.
        own_ms: its own time per step (ms): the lower-trimmed mean the policy judges.
        peers_ms: the median of the other ranks' (ms).
        lost_s: the time the others wait for it in the window: the excess per step times the
            steps times the other ranks (each waits for it at the next collective).
        share: ``lost_s`` over the job's rank-time in the window (ranks x steps x step time).
    """

    rank: int
    own_ms: float
    peers_ms: float
    lost_s: float
    share: float

    @property
    def excess(self) -> float:
        """Its own time over its peers', less one (0.13: 13 % more)."""
        return self.own_ms / self.peers_ms - 1.0 if self.peers_ms > 0 else math.nan

    def describe(self, node: str) -> str:
        """One line for people: which rank, that it is slow outside its collectives, and what
        the job loses to it."""
        share = f" ({self.share:.1%})" if math.isfinite(self.share) else ""
        return (f"rank {self.rank} ({node}) is slow between collectives: {self.excess:.0%} more "
                f"time of its own a step than its peers ({self.own_ms:.3g} ms against "
                f"{self.peers_ms:.3g} ms); the others wait about {self.lost_s:.3g} s{share} for "
                "it")


def confirmed_between(report: object) -> list[SlowBetween]:
    """The ranks a report's policy confirmed on `METRIC` (``Report.straggler_states``), with
    their own time against their peers' (``Report.own_time``), most costly first."""
    table = getattr(report, "own_time", None) or {}
    states = getattr(report, "straggler_states", None) or {}
    window_s = float(getattr(report, "waits_window_s", math.nan))
    found = []
    for rank, state in states.items():
        if getattr(state, "confirmed", False) and METRIC in (getattr(state, "reasons", {}) or {}):
            slow = slow_between(table, int(rank), window_s)
            if slow is not None:
                found.append(slow)
    return sorted(found, key=lambda s: -s.lost_s)


def slow_between(table: Mapping[int, OwnTime], rank: int, window_s: float) -> SlowBetween | None:
    """``rank``'s own time per step against the other ranks' in ``table`` (None when it or all
    of them have none, or it is not slower)."""
    if rank not in table or len(table) < 2:
        return None
    level = sections_level([table[r].sections_ms for r in table])
    others = [_typical(table[r]) + level for r in table if r != rank]
    peers = float(np.median(others))
    own_ms = _typical(table[rank]) + level
    excess_ms = own_ms - peers
    if not excess_ms > 0:
        return None
    lost = excess_ms * 1e-3 * table[rank].steps * len(others)
    rank_time = window_s * len(table) if window_s > 0 else math.nan
    return SlowBetween(rank, own_ms, peers, lost,
                       lost / rank_time if rank_time > 0 else math.nan)


def _typical(own: OwnTime) -> float:
    """The own time per step outside the sections the policy judges: the trimmed mean (the
    median without one)."""
    return own.trimmed_ms if math.isfinite(own.trimmed_ms) else own.median_ms
