"""The decision policy: which ranks are *confirmed* stragglers, given the history of reports.

One report says how slow each rank was in one window. NVRx flags a rank as soon as one window's
score is below 0.75; this module decides over several windows instead. Pure numpy, no process
group: feed it one observation per report (per-rank times for each metric) and it returns a
:class:`PolicyDecision`. Its rules, each configurable through :class:`PolicyConfig`:

* **Peer reference with an effect-size gate.** A rank's *peer score* is the median time of its
  peers (the other ranks of its group) divided by its own time; a report counts as *slow* for a
  rank when that score is below ``threshold`` **and** the rank is at least ``min_effect`` slower
  than the peer median, so job-wide weather (1-3%) never alarms. ``reference="fastest"`` uses
  NVRx's reference (the fastest rank of the group) for the score instead; the effect-size gate
  still compares with the median.
* **Peer groups.** With declared roles (any hashable key per rank, e.g. the pipeline stage) a
  rank is compared only with ranks of the same role. Without roles, the first
  ``structure_warmup`` reports are used to learn stable clusters of ranks (a heavier pipeline
  stage, a MoE expert group) which then become the peer groups, so a structural imbalance is
  recognised as such instead of being flagged.
* **Individual score against a decaying baseline.** Each rank's own time is compared with an
  exponentially weighted baseline of its past times (half-life ``baseline_half_life`` reports),
  so a slow drift is seen and a recovery is accepted. By default this rule judges only ranks
  without peers in the report (``individual="no_peers"``): with peers, a slowdown of the whole
  job is not a straggler.
* **Noise gate.** Each rank's report-to-report noise is estimated from successive differences
  (robust to a step change); a slowdown must exceed ``noise_z`` times it.
* **Persistence and hysteresis.** A rank is confirmed after ``k`` slow reports among its last
  ``n``; it is cleared after ``clear_reports`` consecutive healthy reports: every score at or
  above ``clear_threshold``, or within one sigma of the rank's own noise.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import check_seconds
from ..options import to_options
from .peers import RankSlots, learn_clusters, nan_mean_rows, only_confirmed_peers
from .persistence import MetricState
from .policy_config import PolicyConfig
from .statistics import Statistic

__all__ = ["CULPRIT_METRIC", "GPU_METRIC", "SECTION_PREFIX", "TAIL_SUFFIX", "PolicyConfig",
           "PolicyDecision", "RankState", "StragglerPolicy", "culprit_shares", "make_policy",
           "negligible_sections", "observation_from_report", "window_low", "window_recent",
           "window_spread", "window_steps"]

#: The metric key the detector uses for the per-rank GPU score (sections use their name).
GPU_METRIC = "gpu"
#: The metric of the collective waits: who the job waits for (`straggler.analysis.waits`).
CULPRIT_METRIC = "culprit"

#: A section's metric is ``f"{SECTION_PREFIX}{name}"`` (its window median per rank).
SECTION_PREFIX = "section:"
#: A section's upper-quartile metric is ``f"section:{name}{TAIL_SUFFIX}"``: a rank slow in one
#: step in a few (a heavy upper tail) moves it far more than its median.
TAIL_SUFFIX = ":p75"
# Standard error of a median (of an upper quartile) in units of sigma / sqrt(n), for normal
# noise; sigma = interquartile range / 1.349.
_SE_MEDIAN = math.sqrt(math.pi / 2.0)
_SE_UPPER_QUARTILE = math.sqrt(0.75 * 0.25) / 0.31777
_IQR_SIGMAS = 1.349

_STATE_VERSION = 1
@dataclass(frozen=True)
class RankState:
    """What the policy knows about one rank after a report (kept only for ranks of interest)."""

    rank: int
    confirmed: bool
    #: Metrics on which the rank is confirmed, with the rule: ``{"step": "relative"}``.
    reasons: Mapping[str, str]
    #: Slow reports among the last ``n``, per metric (the larger of relative and individual).
    slow_reports: Mapping[str, int]
    #: Consecutive healthy reports (on every metric) since the rank was last slow.
    healthy_streak: int
    #: Why a rank not confirmed is watched (a suspect): the metrics on which it looks slow, with
    #: the rules that counted it slow: "relative", "individual" (joined by ", " when both), or
    #: "warm-up" (slower than the median of the others while the peer groups are learned).
    #: Empty for a confirmed rank (see ``reasons``).
    suspected_on: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PolicyDecision:
    """The policy's output for one report."""

    #: Ranks confirmed as stragglers after this report.
    confirmed: frozenset[int]
    #: Ranks confirmed by this report that were not confirmed before.
    newly_confirmed: frozenset[int]
    #: Ranks cleared by this report.
    cleared: frozenset[int]
    #: Ranks with at least one slow report in their window, or confirmed.
    states: Mapping[int, RankState]
    #: Peer scores of this report per metric, aligned with ``ranks`` (NaN: no peers or no data).
    peer_scores: Mapping[str, np.ndarray] = field(repr=False)
    #: Individual scores of this report per metric, aligned with ``ranks``.
    individual_scores: Mapping[str, np.ndarray] = field(repr=False)
    #: Ranks of this report, in the order of the score arrays.
    ranks: np.ndarray = field(repr=False)
    #: Ranks that look slow but are not confirmed yet: this report (or a recent one) counted
    #: as slow for them. A report that comes early can confirm or clear them (docs/policy.md).
    suspects: frozenset[int] = frozenset()
    #: Whether the peer groups are known (declared, or learned after the warm-up).
    structure_ready: bool = True


class StragglerPolicy:
    """Confirms and clears stragglers from a sequence of per-rank observations.

    Call :meth:`update` once per report with the per-rank times of each metric (the GPU score's
    time-like value and each section's median; any unit, the same across ranks and reports).
    ``roles`` maps a rank to its role (any hashable key); ranks are then compared only with
    ranks of the same role and no structure is learned.
    """

    def __init__(self, config: PolicyConfig | None = None,
                 roles: Mapping[int, Hashable] | None = None,
                 interval_s: float | None = None) -> None:
        self.config = config if config is not None else PolicyConfig()
        if not isinstance(self.config, PolicyConfig):
            raise ValueError(f"`config={config!r}` must be a PolicyConfig")
        #: The report interval in seconds (the detector's ``report_time_interval``): how long a
        #: full window lasts, for `PolicyConfig.min_slow_s`. None or 0: unknown (no minimum).
        self.interval_s = None if interval_s is None \
            else check_seconds("interval_s", interval_s, allow_zero=True)
        self._ranks = RankSlots(roles)
        self._metrics: dict[str, MetricState] = {}
        # Metrics with any slow mark or confirmation: the only ones the per-report loops over
        # all metrics need to visit. And each metric's last report, least recent first.
        self._flagged: set[str] = set()
        self._last_seen: dict[str, int] = {}
        self._healthy_streak = np.zeros(0, dtype=np.int64)
        self._reports = 0
        self._alpha = 1.0 - 0.5 ** (1.0 / self.config.baseline_half_life)

    # ------------------------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """Everything the policy learned (windows, baselines, noise, groups), as plain lists.

        Pending warm-up reports are not kept: a policy restored before its structure was
        learned starts its warm-up again.
        """
        metrics = {name: ms.state() for name, ms in self._metrics.items()}
        return {"version": _STATE_VERSION, "n": self.config.n,
                "ranks": self._ranks.rank.tolist(), "healthy_streak": self._healthy_streak.tolist(),
                "reports": self._reports, "metrics": metrics}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore `state_dict` output (ValueError if it is not one)."""
        try:
            if state["version"] != _STATE_VERSION:
                raise ValueError(f"version {state['version']!r}")
            ranks = [int(r) for r in state["ranks"]]
            size = len(ranks)
            streak = np.asarray(state["healthy_streak"], dtype=np.int64)
            metrics: dict[str, MetricState] = {}
            for name, entry in state["metrics"].items():
                try:
                    metrics[str(name)] = MetricState.from_state(
                        entry, self.config.n, size, state["n"], str(name).endswith(TAIL_SUFFIX))
                except ValueError as exc:
                    raise ValueError(f"{name}.{exc}") from None
            reports = int(state["reports"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"`state` is not a StragglerPolicy.state_dict() of version "
                             f"{_STATE_VERSION}: {exc}") from None
        self._ranks.reset(ranks)
        self._healthy_streak = streak
        self._metrics = metrics
        self._reports = reports
        self._last_seen = dict.fromkeys(metrics, reports)
        self._flagged = {name for name, ms in metrics.items() if ms.flagged}

    # ----------------------------------------------------------------------------- properties
    @property
    def reports_seen(self) -> int:
        """Number of observations given to :meth:`update`."""
        return self._reports

    @property
    def confirmed(self) -> frozenset[int]:
        """Ranks currently confirmed."""
        return frozenset(int(r) for r in self._ranks.rank[self._confirmed_mask()])

    def groups(self, metric: str) -> dict[int, int] | None:
        """The peer group of each rank for ``metric`` (None before the groups are known)."""
        ms = self._metrics.get(metric)
        g = self._groups_for(ms) if ms is not None else None
        if g is None:
            return None
        return {int(r): int(g[s]) for r, s in self._ranks.slot_of.items()}

    # ---------------------------------------------------------------------------------- update
    def update(self, ranks: Iterable[int] | np.ndarray,
               times: Mapping[str, Iterable[float] | np.ndarray],
               steps: Mapping[str, float] | None = None,
               spread: Mapping[str, Iterable[float] | np.ndarray] | None = None,
               culprits: Mapping[int, float] | None = None,
               low: Mapping[str, Iterable[float] | np.ndarray] | None = None,
               recent: Mapping[str, tuple[Iterable[float] | np.ndarray,
                                          Iterable[float] | np.ndarray]] | None = None,
               early: bool | None = None) -> PolicyDecision:
        """Take one report: ``times[metric]`` holds one value per rank of ``ranks`` (NaN: none).

        ``steps[metric]``: how many steps each value summarises (the window's sample count);
        the evidence rule weighs a report by it. Absent: every report weighs the same.
        ``spread[metric]``: the standard error of each rank's log value from the window's own
        samples (`window_spread`; NaN: unknown), the within-window evidence of the
        evidence rule. Absent: the noise comes from successive reports only.
        ``culprits``: every rank whose collective waits were observed, with the share of the
        job's time lost waiting for it when it is a culprit of this report, else 0
        (`culprit_shares`). Absent: no culprit evidence.
        ``low[metric]``: each rank's fast steps in the window (the 5th percentile of its step
        times, `window_low`; NaN: unknown): the evidence rule counts a rank slower than its
        peers by no more than its fast steps are (interference lengthens some steps, a
        straggler every step). Absent: the median's ratio alone.
        ``recent[metric]``: each rank's median and 5th percentile of the last part of its window
        (`straggler.analysis.recent`, `window_recent`; NaN: unknown): a rank whose recent steps
        are slower than its peers' is slow in this report, so a straggler that starts inside a
        window is seen in that window's report. Absent: the whole window alone.
        A section metric (``"section:<name>"``, times in one unit across sections) whose
        median on a rank is under `PolicyConfig.min_section_share` of the rank's longest
        section is not judged for that rank (`negligible_sections`).
        ``early``: whether this report's window was an early report's (shorter, after a report
        with suspects: the detector's cadence knows); None: read from its steps
        (`PolicyConfig.early_from_steps`).
        """
        ranks_arr = np.asarray(list(ranks) if not isinstance(ranks, np.ndarray) else ranks,
                               dtype=np.int64)
        slots = self._ranks.slots(ranks_arr)
        grown = self._ranks.size - self._healthy_streak.size
        if grown:
            self._healthy_streak = np.concatenate([self._healthy_streak,
                                                   np.zeros(grown, np.int64)])
        cfg = self.config
        before = self._confirmed_mask()
        slow_any = np.zeros(self._ranks.size, dtype=bool)
        unhealthy = np.zeros(self._ranks.size, dtype=bool)
        seen = np.zeros(self._ranks.size, dtype=bool)
        early_only = np.zeros(self._ranks.size, dtype=bool)
        judged_full = np.zeros(self._ranks.size, dtype=bool)
        peer_out: dict[str, np.ndarray] = {}
        ind_out: dict[str, np.ndarray] = {}
        ready = True
        negligible = negligible_sections(times, ranks_arr.size, cfg.min_section_share)
        for metric, values in times.items():
            x = np.asarray(values, dtype=np.float64)
            if x.shape != ranks_arr.shape:
                raise ValueError(f"`times[{metric!r}]` has {x.size} values for "
                                 f"{ranks_arr.size} ranks")
            x = np.where(x > 0, x, np.nan)  # zero or negative times carry no information
            n_steps = float((steps or {}).get(metric, math.nan))
            given = (spread or {}).get(metric)
            se = np.full(x.shape, np.nan) if given is None \
                else np.asarray(given, dtype=np.float64).reshape(x.shape)
            fast = (low or {}).get(metric)
            lo = None if fast is None else np.asarray(fast, dtype=np.float64).reshape(x.shape)
            part = (recent or {}).get(metric)
            rec = None if part is None else (
                np.asarray(part[0], dtype=np.float64).reshape(x.shape),
                np.asarray(part[1], dtype=np.float64).reshape(x.shape))
            ms = self._metrics.get(metric)
            if ms is None:
                ms = self._metrics[metric] = MetricState(cfg.n, self._ranks.size,
                                                         metric.endswith(TAIL_SUFFIX))
            ms.grow(self._ranks.size)
            ms.interval_s = math.nan if self.interval_s is None else self.interval_s
            self._last_seen.pop(metric, None)
            self._last_seen[metric] = self._reports
            logx = np.log(x)
            has = ~np.isnan(x)
            seen[slots[has]] = True
            # Individual score against the decaying baseline (before the baseline moves).
            ind, ind_above_noise, ind_within_noise = ms.individual(cfg, self._alpha, slots, logx)
            ind_out[metric] = ind

            # Peer groups and the peer score.
            groups = self._groups_for(ms)
            if groups is None:  # still learning the structure of this metric
                judged = self._warm_up(ms, slots, x, logx, ind, ind_above_noise,
                                       ind_within_noise, n_steps, se, lo, rec,
                                       negligible.get(metric), early)
                ready = judged is not None
                if judged is None:
                    peer_out[metric] = np.full(x.shape, np.nan)
                    unhealthy[slots[has]] = True
                    self._mark(metric, ms)  # its provisional suspects
                    continue
            else:
                peers = groups[slots]
                judged = ms.judge(cfg, self._alpha, slots, x, ind, ind_above_noise,
                                  ind_within_noise, peers, n_steps, se, lo, rec,
                                  only_confirmed_peers(x, peers, before[slots]),
                                  negligible.get(metric), early)
            peer, slow, bad = judged
            peer_out[metric] = peer
            slow_any[slots[slow]] = True
            unhealthy[slots[bad]] = True
            if ms.short_windows:  # an early report's window: too short to show health
                early_only[slots[has]] = True
            else:
                judged_full[slots[has]] = True
            self._mark(metric, ms)

        if culprits and cfg.culprit_full_share > 0:
            window = [v for v in (steps or {}).values() if v > 0 and math.isfinite(v)]
            slow, bad = self._judge_culprits(culprits, max(window, default=math.nan))
            slow_any |= slow
            unhealthy |= bad
        # Hysteresis: a confirmed rank clears after clear_reports healthy reports in a row. A
        # report whose windows were all short (an early report's) shows no health: its wide
        # noise cleared live stragglers while they were still slow.
        bad_now = unhealthy
        healthy = seen & ~bad_now & ~(early_only & ~judged_full)
        self._healthy_streak = np.where(healthy, self._healthy_streak + 1,
                                        np.where(seen & bad_now, 0, self._healthy_streak))
        # Only a rank confirmed before this report clears (never in the report confirming it).
        clear = healthy & (self._healthy_streak >= cfg.clear_reports) & before
        for metric in tuple(self._flagged):  # unflagged metrics have nothing to clear
            ms = self._metrics[metric]
            ms.grow(self._ranks.size)
            ms.clear(clear & (ms.confirmed_by > 0))
            self._mark(metric, ms)
        self._reports += 1
        self._forget_stale()
        after = self._confirmed_mask()
        return PolicyDecision(
            confirmed=frozenset(int(r) for r in self._ranks.rank[after]),
            newly_confirmed=frozenset(int(r) for r in self._ranks.rank[after & ~before]),
            cleared=frozenset(int(r) for r in self._ranks.rank[before & ~after]),
            states=self._states(after | self._any_slow_mask()),
            suspects=frozenset(int(r) for r in self._ranks.rank[self._any_slow_mask() & ~after]),
            peer_scores=peer_out, individual_scores=ind_out, ranks=ranks_arr,
            structure_ready=ready)

    def _judge_culprits(self, culprits: Mapping[int, float], steps: float
                        ) -> tuple[np.ndarray, np.ndarray]:
        """The culprit metric's report: slow and unhealthy masks over every slot; ``steps``:
        the window's steps (its longest section's; NaN: unknown).

        A report naming as many culprits as a learned cluster may hold (``cluster_min_size``,
        ``cluster_min_fraction`` of the observed ranks) says nothing about a lone straggler (a
        pipeline stage that has more work makes the next one wait): it counts as no culprit.
        """
        cfg = self.config
        known = self._ranks.slot_of  # ranks of no report so far carry no verdict
        # In C loops (map, fromiter), not per-rank Python: 16,384 ranks cost 3 ms as tuples.
        n = len(culprits)
        slots = np.fromiter(map(known.get, culprits, itertools.repeat(-1)), np.int64, n)
        share = np.fromiter(culprits.values(), np.float64, n)
        slots, share = slots[slots >= 0], share[slots >= 0]
        many = max(cfg.cluster_min_size, math.ceil(cfg.cluster_min_fraction * slots.size))
        if int(np.count_nonzero(share > 0)) >= many:
            share = np.where(np.isnan(share), np.nan, 0.0)
        ms = self._metrics.get(CULPRIT_METRIC)
        if ms is None:
            ms = self._metrics[CULPRIT_METRIC] = MetricState(cfg.n, self._ranks.size)
        ms.grow(self._ranks.size)
        self._last_seen.pop(CULPRIT_METRIC, None)
        self._last_seen[CULPRIT_METRIC] = self._reports
        slow, bad = ms.judge_culprits(cfg, slots, share, steps)
        self._mark(CULPRIT_METRIC, ms)
        size = self._ranks.size
        out_slow = np.zeros(size, dtype=bool)
        out_bad = np.zeros(size, dtype=bool)
        out_slow[slots[slow]] = True
        out_bad[slots[bad]] = True
        return out_slow, out_bad

    def _warm_up(self, ms: MetricState, slots: np.ndarray, x: np.ndarray, logx: np.ndarray,
                 ind: np.ndarray, ind_above_noise: np.ndarray, ind_within_noise: np.ndarray,
                 n_steps: float, se: np.ndarray, low: np.ndarray | None = None,
                 recent: tuple[np.ndarray, np.ndarray] | None = None,
                 negligible: np.ndarray | None = None, early: bool | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Keep one report of a metric whose peer groups are not learned yet.

        After ``structure_warmup`` reports the groups are learned and the kept reports replayed
        through the persistence rules; returns the judgement of this report then, else None.
        """
        cfg = self.config
        ms.grow(self._ranks.size)
        ms.provisional_suspects(cfg, slots, x, se, negligible)
        med_all = np.nanmedian(x) if (~np.isnan(x)).any() else np.nan
        level = logx - math.log(med_all) if np.isfinite(med_all) else logx
        full = np.full(self._ranks.size, np.nan)
        full[slots] = level
        ms.warmup_levels.append(full)
        ms.pending.append((slots.copy(), x.copy(), ind.copy(), ind_above_noise, ind_within_noise,
                           n_steps, se.copy(), None if low is None else low.copy(), recent,
                           negligible, early))
        if len(ms.warmup_levels) < cfg.structure_warmup:
            return None
        ms.grow(self._ranks.size)
        ms.groups = learn_clusters(nan_mean_rows(ms.warmup_levels, self._ranks.size),
                                   cfg.cluster_gap, cfg.cluster_min_fraction,
                                   cfg.cluster_min_size)
        ms.warmup_levels = []
        ms.provisional[:] = 0
        pending, ms.pending = ms.pending, []
        judged = None
        for (p_slots, p_x, p_ind, p_above, p_within, p_steps, p_se, p_low, p_recent,
             p_negligible, p_early) in pending:
            judged = ms.judge(cfg, self._alpha, p_slots, p_x, p_ind, p_above, p_within,
                              ms.groups[p_slots], p_steps, p_se, p_low, p_recent,
                              negligible=p_negligible, early=p_early)
        return judged

    # ------------------------------------------------------------------------------- helpers
    def _mark(self, metric: str, ms: MetricState) -> None:
        if ms.flagged:
            self._flagged.add(metric)
        else:
            self._flagged.discard(metric)

    def forget_unseen(self, reports: int) -> None:
        """Forget now the metrics absent from the last ``reports`` reports (name churn)."""
        self._forget_stale(reports)

    def _forget_stale(self, after: int | None = None) -> None:
        """Drop metrics absent from the last `forget_after_reports` reports (oldest first)."""
        cutoff = self._reports - (self.config.forget_after_reports if after is None else after)
        excess = len(self._last_seen) - self.config.max_metrics
        stale: list[str] = []
        for metric, last in self._last_seen.items():
            if last >= cutoff and len(stale) >= excess:
                break
            stale.append(metric)
        for metric in stale:
            del self._last_seen[metric]
            self._metrics.pop(metric, None)
            self._flagged.discard(metric)

    @property
    def metrics_tracked(self) -> int:
        """Number of metrics the policy holds state for."""
        return len(self._metrics)

    def _groups_for(self, ms: MetricState) -> np.ndarray | None:
        roles = self._ranks.role_groups()
        if roles is not None:
            return roles
        if not self.config.learn_structure:
            return np.zeros(self._ranks.size, dtype=np.int64)
        return ms.groups

    def _confirmed_mask(self) -> np.ndarray:
        mask = np.zeros(self._ranks.size, dtype=bool)
        for metric in self._flagged:
            ms = self._metrics[metric]
            mask[: ms.confirmed_by.size] |= ms.confirmed_by > 0
        return mask

    def _any_slow_mask(self) -> np.ndarray:
        mask = np.zeros(self._ranks.size, dtype=bool)
        for ms in (self._metrics[m] for m in self._flagged):
            size = ms.rel_window.size
            mask[:size] |= ((ms.rel_window | ms.ind_window) > 0) | (ms.provisional > 0)
        return mask

    def _states(self, mask: np.ndarray) -> dict[int, RankState]:
        out = {}
        for s in np.flatnonzero(mask).tolist():
            marks = {m: self._metrics[m].marks(s) for m in sorted(self._flagged)}  # others: none
            reasons = {m: reason for m, (reason, _) in marks.items() if reason}
            suspected: dict[str, str] = {}
            if not reasons:  # a suspect: why it looks slow, so no watched rank lacks a reason
                whys = {m: self._metrics[m].suspected_by(s) for m in marks}
                suspected = {m: why for m, why in whys.items() if why}
            rank = int(self._ranks.rank[s])
            out[rank] = RankState(rank=rank, confirmed=bool(reasons), reasons=reasons,
                                  slow_reports={m: n for m, (_, n) in marks.items() if n},
                                  healthy_streak=int(self._healthy_streak[s]),
                                  suspected_on=suspected)
        return out


def negligible_sections(times: Mapping[str, Iterable[float] | np.ndarray], size: int,
                        share: float) -> dict[str, np.ndarray]:
    """Where each section is negligible: ``{metric: mask over the ranks}`` for the section
    metrics (``"section:<name>"`` and its upper quartile) whose median on a rank is under
    ``share`` of that rank's longest section median in ``times`` (`PolicyConfig.min_section_share`;
    the sections' times must share a unit, as a report's medians in ms do). Metrics negligible
    on no rank, other metrics and values of another length than ``size`` are left out."""
    medians: dict[str, np.ndarray] = {}
    if share > 0:
        for metric, values in times.items():
            if metric.startswith(SECTION_PREFIX) and not metric.endswith(TAIL_SUFFIX):
                x = np.asarray(values, dtype=np.float64)
                if x.shape == (size,):
                    medians[metric] = np.where(x > 0, x, np.nan)
    if len(medians) < 2:
        return {}
    longest = np.fmax.reduce(np.stack(list(medians.values())), axis=0)  # NaN: none
    out: dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore"):
        for metric, x in medians.items():
            mask = x < share * longest
            if mask.any():
                out[metric] = out[metric + TAIL_SUFFIX] = mask
    return out


def observation_from_report(report: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The policy's input from a gathered `Report`: ranks and per-metric time-like values.

    Sections use ``section_medians_ms`` (absolute medians, so the personal baseline also sees
    job-wide changes) and fall back to ``1 / section relative score``; the GPU metric uses
    ``1 / gpu relative score`` (the rank's time over the reference, the same for every rank of a
    report). Ranks come from the score dicts; values a rank lacks are NaN.
    """
    metrics: dict[str, tuple[Mapping[int, Any], bool, int]] = {}  # values, invert, column
    # Our relative scores (robust_*: the generator's reference) when the report has them.
    gpu_rel = (getattr(report, "robust_gpu_relative_scores", None)
               or getattr(report, "gpu_relative_perf_scores", None) or {})
    if gpu_rel:
        metrics[GPU_METRIC] = (gpu_rel, True, -1)
    medians = getattr(report, "section_medians_ms", None) or {}
    sec_rel = (getattr(report, "robust_section_relative_scores", None)
               or getattr(report, "section_relative_perf_scores", None) or {})
    quartiles = getattr(report, "section_quartiles_ms", None) or {}
    for name in sorted(set(medians) | set(sec_rel)):
        if medians.get(name):
            metrics[f"section:{name}"] = (medians[name], False, -1)
        else:
            metrics[f"section:{name}"] = (sec_rel[name], True, -1)
        if quartiles.get(name):  # the upper quartile of each rank's (lower, upper) pair
            metrics[f"section:{name}{TAIL_SUFFIX}"] = (quartiles[name], False, 1)
    all_ranks = set(getattr(report, "rank_to_node", None) or {})
    for by_rank, _, _ in metrics.values():
        all_ranks.update(by_rank)
    order = sorted(all_ranks)
    ranks = np.array(order, dtype=np.int64)
    times = {}
    for metric, (by_rank, invert, column) in metrics.items():
        values = _aligned(by_rank, order, 1 if column < 0 else 2)
        if column >= 0:
            values = values[:, column]
        if invert:  # a score (reference / time): its inverse is time-like
            with np.errstate(divide="ignore", invalid="ignore"):
                values = np.where(np.isfinite(values) & (values > 0), 1.0 / values, np.nan)
        times[metric] = values
    return ranks, times


def culprit_shares(report: Any) -> dict[int, float]:
    """The policy's culprit input from a gathered `Report`: every rank with observed collective
    waits (``Report.waits``), with the share of the job's time lost to it when it is one of
    ``Report.culprits``, else 0. Empty without waits."""
    waits = getattr(report, "waits", None) or {}
    out = dict.fromkeys(map(int, waits), 0.0)
    for c in getattr(report, "culprits", None) or ():
        out[int(c.rank)] = float(c.share)
    return out


def window_spread(report: Any, ranks: np.ndarray,
                  steps: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Each section metric's within-window standard error of every rank's log value.

    From the rank's quartiles of the window (``Report.section_quartiles_ms``) and the window's
    steps (`window_steps`): ``c * log(q75 / q25) / 1.349 / sqrt(steps)``, ``c`` the standard
    error factor of a median (1.25) or of an upper quartile (1.36) for normal noise. Aligned
    with ``ranks``; NaN where a rank has no quartiles. Sections without a step count get none.
    """
    steps = window_steps(report) if steps is None else steps
    quartiles = getattr(report, "section_quartiles_ms", None) or {}
    out: dict[str, np.ndarray] = {}
    order = ranks.tolist()
    for name, by_rank in quartiles.items():
        n = steps.get(f"section:{name}")
        if not n or not by_rank:
            continue
        pairs = _aligned(by_rank, order, 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = (pairs[:, 0] > 0) & (pairs[:, 1] >= pairs[:, 0])
            sigma = np.where(ok, np.log(pairs[:, 1] / np.where(ok, pairs[:, 0], 1.0)), np.nan)
        sigma /= _IQR_SIGMAS * math.sqrt(n)
        out[f"section:{name}"] = _SE_MEDIAN * sigma
        out[f"section:{name}{TAIL_SUFFIX}"] = _SE_UPPER_QUARTILE * sigma
    return out


def window_low(report: Any, ranks: np.ndarray) -> dict[str, np.ndarray]:
    """Each section metric's fast steps per rank: the window's low percentile
    (``Report.section_low_ms``), aligned with ``ranks``, NaN where a rank has none."""
    out: dict[str, np.ndarray] = {}
    order = ranks.tolist()
    for name, by_rank in (getattr(report, "section_low_ms", None) or {}).items():
        if by_rank:
            out[f"section:{name}"] = _aligned(by_rank, order)
    return out


def window_recent(report: Any, ranks: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each section metric's recent part per rank: the median and the low percentile of the
    last steps of the window (``Report.section_recent_ms``, `straggler.analysis.recent`),
    aligned with ``ranks``, NaN where a rank has none."""
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    order = ranks.tolist()
    for name, by_rank in (getattr(report, "section_recent_ms", None) or {}).items():
        if by_rank:
            pairs = _aligned(by_rank, order, 2)
            out[f"section:{name}"] = (pairs[:, 0], pairs[:, 1])
    return out


def _aligned(by_rank: Mapping[int, Any], order: list[int], width: int = 1) -> np.ndarray:
    """``by_rank``'s values (numbers, or tuples of ``width``) in the order of ``order``, NaN
    where a rank has none: ``(ranks,)``, or ``(ranks, width)`` for tuples.

    A gathered report holds every rank in order: its values are read in one C loop (at 16,384
    ranks 1 ms for pairs against 6 ms looked up per rank)."""
    if len(by_rank) == len(order) and list(by_rank) == order:
        values = by_rank.values()
        flat = values if width == 1 else itertools.chain.from_iterable(values)
        out = np.fromiter(flat, dtype=np.float64, count=width * len(order))
    else:
        missing = math.nan if width == 1 else (math.nan,) * width
        out = np.array([by_rank.get(r, missing) for r in order], dtype=np.float64)
    return out if width == 1 else out.reshape(-1, width)


def window_steps(report: Any) -> dict[str, float]:
    """Steps behind each section metric of a `Report`: the reporting rank's sample count.

    Ranks of a data-parallel job run the same steps, so the reporting rank's ``NUM`` of a section
    stands for every rank's. The GPU metric (many timers) has none.
    """
    local = getattr(report, "local_section_summaries", None) or {}
    out = {}
    for name, stats in local.items():
        n = stats.get(Statistic.NUM) if isinstance(stats, Mapping) else None
        if n is not None and n > 0:
            out[f"section:{name}"] = out[f"section:{name}{TAIL_SUFFIX}"] = float(n)
    return out


def make_policy(policy: StragglerPolicy | PolicyConfig | Mapping[str, Any] | bool | None,
                roles: Mapping[int, Hashable] | None = None,
                interval_s: float | None = None) -> StragglerPolicy | None:
    """The policy for the user's ``policy`` option: a `StragglerPolicy` as it is, else one built
    from the `PolicyConfig` that `straggler.options.to_options` makes of it (True: the
    defaults; None and False: none), with the report interval ``interval_s`` (s; None:
    unknown). A `StragglerPolicy` without an interval gets ``interval_s``.

    ``roles`` alone (with ``policy=None``) turns the default policy on with those roles;
    ``roles`` with ``policy=False`` raise `ValueError` (roles are the policy's only input).
    """
    if isinstance(policy, StragglerPolicy):
        if roles is not None:
            raise ValueError("`roles` must be given to the StragglerPolicy itself when `policy` "
                             "is a StragglerPolicy instance")
        if policy.interval_s is None and interval_s is not None:
            policy.interval_s = check_seconds("interval_s", interval_s, allow_zero=True)
        return policy
    config = to_options(PolicyConfig, policy, "policy")
    if config is None and roles is not None:
        if policy is not None:  # False: the user turned off what roles are for
            raise ValueError(f"`roles={roles!r:.200}` given with `policy={policy!r}`: "
                             "roles only choose the policy's peer groups, and the policy is "
                             "off; drop `roles` or turn the policy on (`policy=True`)")
        config = PolicyConfig()
    return None if config is None else StragglerPolicy(config, roles=roles,
                                                       interval_s=interval_s)
