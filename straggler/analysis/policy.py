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

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._checks import check_bool, check_choice, check_fraction, check_int, check_number
from .._compat import forward

__all__ = ["GPU_METRIC", "PolicyConfig", "PolicyDecision", "RankState", "StragglerPolicy",
           "make_policy", "observation_from_report"]

#: The metric key the detector uses for the per-rank GPU score (sections use their name).
GPU_METRIC = "gpu"

_REFERENCES = ("median", "fastest")
_INDIVIDUAL_MODES = ("no_peers", "always", "off")
_STATE_VERSION = 1
_GAP_FACTOR = 8.0  # a cluster boundary is this many times wider than the median spacing
_MIN_HISTORY = 2
# Upper estimate of a rank's noise from m successive differences: sigma * (1 + a/sqrt(m) + b/m).
# The b/m term guards the first reports, when a handful of differences can be far too small.
_SQRT_TERM = 1.0
_LINEAR_TERM = 3.0  # successive differences a rank needs before its individual rule may fire


@dataclass(frozen=True)
class PolicyConfig:
    """Tunables of :class:`StragglerPolicy`; validated here, defaults from benchmarks/README.md.

    Each default names the table row that supports it in ``docs/policy.md``.
    """

    #: Peer score (reference time / own time) below which a report counts as slow.
    threshold: float = 0.96
    #: Minimum slowdown versus the peer median for a report to count as slow (effect-size gate).
    min_effect: float = 0.04
    #: ``"median"`` (median of the peers, robust) or ``"fastest"`` (NVRx: the group's fastest).
    reference: str = "median"
    #: A rank is confirmed after ``k`` slow reports among its last ``n``.
    k: int = 4
    n: int = 5
    #: Scores at or above this count as healthy for clearing (hysteresis: above ``threshold``).
    clear_threshold: float = 0.97
    #: Consecutive healthy reports needed to clear a confirmed rank.
    clear_reports: int = 3
    #: When to compare a rank with its own decaying baseline: ``"no_peers"`` (only ranks without
    #: peers in the report, e.g. with ``gather_on_rank0=False`` or alone in their role; a slowdown
    #: of the whole job is then not a straggler), ``"always"`` or ``"off"``.
    individual: str = "no_peers"
    #: Individual score (baseline / own time) below which a report counts as individually slow.
    individual_threshold: float = 0.9
    #: Half-life of the personal baseline, in reports.
    baseline_half_life: float = 20.0
    #: Noise gate: a slowdown must also exceed ``noise_z`` times the rank's own report-to-report
    #: noise (estimated from successive differences), so noisy but healthy ranks do not alarm.
    #: 0 turns the gate off.
    noise_z: float = 3.0
    #: Without declared roles, learn stable clusters of ranks as peer groups.
    learn_structure: bool = True
    #: Reports used to learn the clusters (no rank is confirmed before they are seen).
    structure_warmup: int = 3
    #: Smallest relative gap between sorted rank levels that separates two clusters.
    cluster_gap: float = 0.01
    #: A cluster is structural when it holds at least this fraction of the ranks ...
    cluster_min_fraction: float = 0.1
    #: ... and at least this many ranks.
    cluster_min_size: int = 2
    #: A metric (section) absent from this many reports in a row is forgotten, so the policy's
    #: memory and time follow the names in use, not every name ever seen.
    forget_after_reports: int = 50
    #: At most this many metrics are tracked; beyond it the least recently seen are forgotten.
    max_metrics: int = 4096

    def __post_init__(self) -> None:
        check_fraction("threshold", self.threshold)
        check_number("min_effect", self.min_effect, 0.0, 10.0)
        check_choice("reference", self.reference, _REFERENCES)
        check_int("n", self.n)
        if self.n > 32:
            raise ValueError(f"`n={self.n!r}` must be at most 32 reports")
        check_int("k", self.k)
        if self.k > self.n:
            raise ValueError(f"`k={self.k!r}` must not exceed `n={self.n!r}`")
        check_fraction("clear_threshold", self.clear_threshold)
        if self.clear_threshold < self.threshold:
            raise ValueError(f"`clear_threshold={self.clear_threshold!r}` must be >= "
                             f"`threshold={self.threshold!r}` (hysteresis)")
        check_int("clear_reports", self.clear_reports)
        check_choice("individual", self.individual, _INDIVIDUAL_MODES)
        check_fraction("individual_threshold", self.individual_threshold)
        check_number("baseline_half_life", self.baseline_half_life, 0.0, low_open=True,
                     unit="reports")
        check_number("noise_z", self.noise_z, 0.0)
        check_bool("learn_structure", self.learn_structure)
        check_int("structure_warmup", self.structure_warmup)
        check_number("cluster_gap", self.cluster_gap, 0.0, 10.0, low_open=True)
        check_fraction("cluster_min_fraction", self.cluster_min_fraction)
        check_int("cluster_min_size", self.cluster_min_size, 2)
        check_int("forget_after_reports", self.forget_after_reports)
        check_int("max_metrics", self.max_metrics)


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
    #: Whether the peer groups are known (declared, or learned after the warm-up).
    structure_ready: bool = True


def median_of_others(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Median of the *other* members of each element's group (NaN values are not members).

    ``groups`` are integer labels aligned with ``values``. A rank alone in its group gets NaN.
    O(n) per group: only the order statistics around the middle are needed (``np.partition``).
    """
    out = np.full(values.shape, np.nan)
    valid = ~np.isnan(values)
    labels = groups[valid]
    single = labels.size and labels.min() == labels.max()
    for g in (labels[:1] if single else np.unique(labels)):
        idx = np.flatnonzero(valid) if single else np.flatnonzero(valid & (groups == g))
        m = idx.size - 1  # peers of each member
        if m < 1:
            continue
        x = values[idx]
        # Removing x from the sorted values shifts the order statistics above it down by one;
        # comparing values instead of positions gives the same result under ties.
        if m % 2:
            j = (m - 1) // 2
            v = np.partition(x, [j, j + 1])
            med = np.where(x > v[j], v[j], v[j + 1])
        else:
            j1, j2 = m // 2 - 1, m // 2
            v = np.partition(x, [j1, j2, j2 + 1])
            med = 0.5 * (np.where(x > v[j1], v[j1], v[j1 + 1])
                         + np.where(x > v[j2], v[j2], v[j2 + 1]))
        out[idx] = med
    return out


def _group_min(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    out = np.full(values.shape, np.nan)
    valid = ~np.isnan(values)
    for g in np.unique(groups[valid]):
        idx = np.flatnonzero(valid & (groups == g))
        if idx.size > 1:
            out[idx] = values[idx].min()
    return out


def _nan_mean_rows(rows: list[np.ndarray], size: int) -> np.ndarray:
    """Column means ignoring NaN (NaN where a column has no value), without warnings."""
    stack = np.full((len(rows), size), np.nan)
    for i, row in enumerate(rows):
        stack[i, : row.size] = row
    count = np.sum(~np.isnan(stack), axis=0)
    total = np.nansum(stack, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def learn_clusters(levels: np.ndarray, config: PolicyConfig) -> np.ndarray:
    """Group ranks by level (log time relative to the median): stable clusters become groups.

    Sorted levels are split where two neighbours differ by more than ``cluster_gap`` and by more
    than eight times the median spacing of neighbours (so a tight stage is cut from the next one
    even when the per-GPU spread fills most of the space between them); a cluster
    with at least ``cluster_min_fraction`` of the ranks (and ``cluster_min_size``) is structural.
    Members of smaller clusters (candidate stragglers) join the nearest structural cluster that
    is faster than them (else the nearest). With fewer than two structural clusters every rank
    is in group 0. NaN levels get group 0 too.
    """
    groups = np.zeros(levels.shape, dtype=np.int64)
    valid = np.flatnonzero(~np.isnan(levels))
    if valid.size < 2 * config.cluster_min_size:
        return groups
    order = valid[np.argsort(levels[valid], kind="stable")]
    sorted_levels = levels[order]
    gaps = np.diff(sorted_levels)
    # A gap separates clusters when it is both wide (cluster_gap) and unusual for this world:
    # many times the typical spacing of neighbours, which the per-GPU spread sets.
    cut = max(math.log1p(config.cluster_gap), _GAP_FACTOR * float(np.median(gaps)))
    breaks = np.flatnonzero(gaps > cut) + 1
    clusters = np.split(order, breaks)
    min_size = max(config.cluster_min_size, math.ceil(config.cluster_min_fraction * valid.size))
    big = [c for c in clusters if c.size >= min_size]
    if len(big) < 2:
        return groups
    centres = np.array([np.median(levels[c]) for c in big])
    for gid, c in enumerate(big):
        groups[c] = gid
    for c in clusters:
        if c.size >= min_size:
            continue
        for r in c:
            faster = np.flatnonzero(centres <= levels[r])
            cand = faster if faster.size else np.arange(centres.size)
            groups[r] = cand[np.argmin(np.abs(centres[cand] - levels[r]))]
    return groups


def _popcount(bits: np.ndarray, n: int) -> np.ndarray:
    """Number of set bits among the low ``n`` bits of each element."""
    count = np.zeros(bits.shape, dtype=np.int64)
    for i in range(n):
        count += (bits >> np.uint32(i)) & np.uint32(1)
    return count


def _update_noise(prev: np.ndarray, sigma: np.ndarray, obs: np.ndarray, slots: np.ndarray,
                  value: np.ndarray, alpha: float, floor: float) -> np.ndarray:
    """Update the noise estimate of ``slots`` with ``value``; returns the gate's sigma.

    The returned sigma is the estimate before this update, inflated by ``1 + 1/sqrt(m) + 3/m``
    for an estimate made of ``m`` differences (0 before the first difference): a few early
    differences can be far too small, and among thousands of noisy ranks some will be.

    sigma is the mean |successive difference| / 1.128 (the standard deviation for Gaussian noise):
    a running mean over the first reports, then exponentially weighted (weight ``alpha``). Each
    difference is clipped at ``max(4 sigma, floor)`` (``floor``: the smallest slowdown that can
    alarm), so a step change (the onset of a slowdown) barely raises sigma even in the first
    reports, while a noisy rank's estimate still grows to its real noise.
    """
    # Gate with an upper estimate: a mean of m differences is uncertain by about 1/sqrt(m).
    o, sg, pv = obs[slots], sigma[slots], prev[slots]
    m = np.minimum(o, 2.0 / alpha - 1.0)
    mm = np.maximum(m, 1.0)
    before = np.where(m > 0, sg * (1.0 + _SQRT_TERM / np.sqrt(mm) + _LINEAR_TERM / mm), 0.0)
    diff = np.minimum(np.abs(value - pv), np.maximum(4.0 * sg, floor)) / 1.128
    ok = ~np.isnan(diff)
    weight = np.maximum(alpha, 1.0 / (o + 1.0))
    sigma[slots] = np.where(ok, sg + weight * (np.where(ok, diff, 0.0) - sg), sg)
    obs[slots] = o + ok
    prev[slots] = np.where(np.isnan(value), pv, value)
    return before


class _MetricState:
    """Per-metric arrays over rank slots: windows, baselines, learned groups."""

    def __init__(self, n: int, size: int) -> None:
        # Persistence windows as bit fields: bit i set = slow i reports ago (for ranks with data).
        self.mask = np.uint32((1 << n) - 1)
        self.n = n
        self.rel_window = np.zeros(size, dtype=np.uint32)
        self.ind_window = np.zeros(size, dtype=np.uint32)
        self.baseline = np.full(size, np.nan)  # log time
        self.confirmed_by = np.zeros(size, dtype=np.int8)  # 0 no, 1 relative, 2 individual
        # Noise estimates: last value and EW mean |successive difference| / 1.128 (= sigma for
        # Gaussian noise), for the log ratio to the peers and for the log time.
        self.rel_prev = np.full(size, np.nan)
        self.rel_sigma = np.zeros(size)
        self.rel_obs = np.zeros(size, dtype=np.int64)
        self.ind_prev = np.full(size, np.nan)
        self.ind_sigma = np.zeros(size)
        self.ind_obs = np.zeros(size, dtype=np.int64)
        self.groups: np.ndarray | None = None
        self.warmup_levels: list[np.ndarray] = []
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def grow(self, size: int) -> None:
        extra = size - self.baseline.size
        if extra <= 0:
            return
        self.rel_window = np.concatenate([self.rel_window, np.zeros(extra, np.uint32)])
        self.ind_window = np.concatenate([self.ind_window, np.zeros(extra, np.uint32)])
        self.baseline = np.concatenate([self.baseline, np.full(extra, np.nan)])
        self.confirmed_by = np.concatenate([self.confirmed_by, np.zeros(extra, np.int8)])
        for name in ("rel_prev", "ind_prev"):
            setattr(self, name, np.concatenate([getattr(self, name), np.full(extra, np.nan)]))
        for name in ("rel_sigma", "ind_sigma", "rel_obs", "ind_obs"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.zeros(extra, old.dtype)]))
        if self.groups is not None:
            self.groups = np.concatenate([self.groups, np.zeros(extra, np.int64)])


class StragglerPolicy:
    """Confirms and clears stragglers from a sequence of per-rank observations.

    Call :meth:`update` once per report with the per-rank times of each metric (the GPU score's
    time-like value and each section's median; any unit, the same across ranks and reports).
    ``roles`` maps a rank to its role (any hashable key); ranks are then compared only with
    ranks of the same role and no structure is learned.
    """

    def __init__(self, config: PolicyConfig | None = None,
                 roles: Mapping[int, Hashable] | None = None) -> None:
        self.config = config if config is not None else PolicyConfig()
        if not isinstance(self.config, PolicyConfig):
            raise ValueError(f"`config={config!r}` must be a PolicyConfig")
        if roles is not None and not isinstance(roles, Mapping):
            raise ValueError(f"`roles={roles!r}` must be a mapping rank -> role")
        self._role_of: dict[int, int] = {}
        if roles:
            codes: dict[Hashable, int] = {}
            for rank, role in roles.items():
                try:
                    self._role_of[int(rank)] = codes.setdefault(role, len(codes))
                except TypeError as exc:
                    raise ValueError(f"`roles` entry {rank!r}: {role!r} is not hashable") from exc
        self._slot_of: dict[int, int] = {}
        self._slot_rank = np.zeros(0, dtype=np.int64)
        self._metrics: dict[str, _MetricState] = {}
        # Metrics with any slow mark or confirmation: the only ones the per-report loops over
        # all metrics need to visit. And each metric's last report, least recent first.
        self._flagged: set[str] = set()
        self._last_seen: dict[str, int] = {}
        self._healthy_streak = np.zeros(0, dtype=np.int64)
        self._reports = 0
        self._alpha = 1.0 - 0.5 ** (1.0 / self.config.baseline_half_life)
        self._last_ranks: np.ndarray | None = None
        self._role_groups: np.ndarray | None = None
        self._last_slots: np.ndarray | None = None

    # ------------------------------------------------------------------------------- state
    _ARRAYS = ("rel_window", "ind_window", "baseline", "confirmed_by", "rel_prev", "rel_sigma",
               "rel_obs", "ind_prev", "ind_sigma", "ind_obs")

    def state_dict(self) -> dict[str, Any]:
        """Everything the policy learned (windows, baselines, noise, groups), as plain lists.

        Pending warm-up reports are not kept: a policy restored before its structure was
        learned starts its warm-up again.
        """
        metrics = {}
        for name, ms in self._metrics.items():
            entry = {k: getattr(ms, k).tolist() for k in self._ARRAYS}
            entry["groups"] = None if ms.groups is None else ms.groups.tolist()
            metrics[name] = entry
        return {"version": _STATE_VERSION, "n": self.config.n,
                "ranks": self._slot_rank.tolist(), "healthy_streak": self._healthy_streak.tolist(),
                "reports": self._reports, "metrics": metrics}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore `state_dict` output (ValueError if it is not one)."""
        try:
            if state["version"] != _STATE_VERSION:
                raise ValueError(f"version {state['version']!r}")
            ranks = [int(r) for r in state["ranks"]]
            size = len(ranks)
            streak = np.asarray(state["healthy_streak"], dtype=np.int64)
            metrics = {}
            for name, entry in state["metrics"].items():
                ms = _MetricState(self.config.n, size)
                for key in self._ARRAYS:
                    old = getattr(ms, key)
                    value = np.asarray(entry[key], dtype=old.dtype)
                    if value.shape != old.shape:
                        raise ValueError(f"{name}.{key} has shape {value.shape}")
                    setattr(ms, key, value)
                if state["n"] != self.config.n:  # another window length: start the windows anew
                    ms.rel_window[:] = 0
                    ms.ind_window[:] = 0
                else:
                    ms.rel_window &= ms.mask
                    ms.ind_window &= ms.mask
                if entry["groups"] is not None:
                    ms.groups = np.asarray(entry["groups"], dtype=np.int64)
                metrics[str(name)] = ms
            reports = int(state["reports"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"`state` is not a StragglerPolicy.state_dict() of version "
                             f"{_STATE_VERSION}: {exc}") from None
        self._slot_of = {r: i for i, r in enumerate(ranks)}
        self._slot_rank = np.asarray(ranks, dtype=np.int64)
        self._healthy_streak = streak
        self._metrics = metrics
        self._reports = reports
        self._last_seen = dict.fromkeys(metrics, reports)
        self._flagged = {name for name, ms in metrics.items() if self._is_flagged(ms)}
        self._last_ranks = self._last_slots = None
        self._role_groups = None

    # ----------------------------------------------------------------------------- properties
    @property
    def reports_seen(self) -> int:
        """Number of observations given to :meth:`update`."""
        return self._reports

    @property
    def confirmed(self) -> frozenset[int]:
        """Ranks currently confirmed."""
        return self._confirmed_set()

    def groups(self, metric: str) -> dict[int, int] | None:
        """The peer group of each rank for ``metric`` (None before the groups are known)."""
        ms = self._metrics.get(metric)
        g = self._groups_for(ms) if ms is not None else None
        if g is None:
            return None
        return {int(r): int(g[s]) for r, s in self._slot_of.items()}

    # ---------------------------------------------------------------------------------- update
    def update(self, ranks: Iterable[int] | np.ndarray,
               times: Mapping[str, Iterable[float] | np.ndarray]) -> PolicyDecision:
        """Take one report: ``times[metric]`` holds one value per rank of ``ranks`` (NaN: none)."""
        ranks_arr = np.asarray(list(ranks) if not isinstance(ranks, np.ndarray) else ranks,
                               dtype=np.int64)
        slots = self._slots(ranks_arr)
        cfg = self.config
        before = self._confirmed_mask()
        slow_any = np.zeros(self._slot_rank.size, dtype=bool)
        unhealthy = np.zeros(self._slot_rank.size, dtype=bool)
        seen = np.zeros(self._slot_rank.size, dtype=bool)
        peer_out: dict[str, np.ndarray] = {}
        ind_out: dict[str, np.ndarray] = {}
        ready = True
        for metric, values in times.items():
            x = np.asarray(values, dtype=np.float64)
            if x.shape != ranks_arr.shape:
                raise ValueError(f"`times[{metric!r}]` has {x.size} values for "
                                 f"{ranks_arr.size} ranks")
            x = np.where(x > 0, x, np.nan)  # zero or negative times carry no information
            ms = self._metrics.get(metric)
            if ms is None:
                ms = self._metrics[metric] = _MetricState(cfg.n, self._slot_rank.size)
            ms.grow(self._slot_rank.size)
            self._last_seen.pop(metric, None)
            self._last_seen[metric] = self._reports
            logx = np.log(x)
            has = ~np.isnan(x)
            seen[slots[has]] = True

            # Individual score against the decaying baseline (before the baseline moves).
            base = ms.baseline[slots]
            ind = np.exp(base - logx)
            ind_sigma = _update_noise(ms.ind_prev, ms.ind_sigma, ms.ind_obs, slots, logx,
                                      self._alpha, math.log1p(cfg.min_effect))
            with np.errstate(invalid="ignore"):
                # The baseline and the noise estimate need a few reports before they mean much.
                ind_above_noise = ((-np.log(ind) >= cfg.noise_z * ind_sigma)
                                   & (ms.ind_obs[slots] > _MIN_HISTORY))
                ind_within_noise = -np.log(ind) < ind_sigma
            fresh = has & np.isnan(base)
            ms.baseline[slots[fresh]] = logx[fresh]
            upd = has & ~np.isnan(base)
            ms.baseline[slots[upd]] = base[upd] + self._alpha * (logx[upd] - base[upd])
            ind_out[metric] = ind

            # Peer groups and the peer score.
            groups = self._groups_for(ms)
            if groups is None:  # still learning the structure of this metric
                ready = False
                med_all = np.nanmedian(x) if has.any() else np.nan
                level = logx - math.log(med_all) if np.isfinite(med_all) else logx
                full = np.full(self._slot_rank.size, np.nan)
                full[slots] = level
                ms.warmup_levels.append(full)
                ms.pending.append((slots.copy(), x.copy(), ind.copy(), ind_above_noise,
                                   ind_within_noise))
                if len(ms.warmup_levels) >= cfg.structure_warmup:
                    ms.grow(self._slot_rank.size)
                    ms.groups = learn_clusters(_nan_mean_rows(ms.warmup_levels,
                                                              self._slot_rank.size), cfg)
                    ms.warmup_levels = []
                    # Replay the warm-up through the persistence rules with the learned groups.
                    pending, ms.pending = ms.pending, []
                    for p_slots, p_x, p_ind, p_ok, p_in in pending[:-1]:
                        self._judge(ms, p_slots, p_x, p_ind, p_ok, p_in, ms.groups[p_slots])
                    p_slots, p_x, p_ind, p_ok, p_in = pending[-1]
                    peer, slow, bad = self._judge(ms, p_slots, p_x, p_ind, p_ok, p_in,
                                                  ms.groups[p_slots])
                    peer_out[metric] = peer
                    slow_any[slots[slow]] = True
                    unhealthy[slots[bad]] = True
                    ready = True
                    self._mark(metric, ms)
                else:
                    peer_out[metric] = np.full(x.shape, np.nan)
                    unhealthy[slots[has]] = True
                continue
            peer, slow, bad = self._judge(ms, slots, x, ind, ind_above_noise, ind_within_noise,
                                          groups[slots])
            peer_out[metric] = peer
            slow_any[slots[slow]] = True
            unhealthy[slots[bad]] = True
            self._mark(metric, ms)

        # Hysteresis: a confirmed rank clears after clear_reports healthy reports in a row.
        healthy = seen & ~unhealthy
        self._healthy_streak = np.where(healthy, self._healthy_streak + 1,
                                        np.where(seen, 0, self._healthy_streak))
        clear = healthy & (self._healthy_streak >= cfg.clear_reports)
        for metric in tuple(self._flagged):  # unflagged metrics have nothing to clear
            ms = self._metrics[metric]
            ms.grow(self._slot_rank.size)
            hit = clear & (ms.confirmed_by > 0)
            ms.confirmed_by[hit] = 0
            ms.rel_window[hit] = 0
            ms.ind_window[hit] = 0
            self._mark(metric, ms)
        self._reports += 1
        self._forget_stale()
        after = self._confirmed_mask()
        return PolicyDecision(
            confirmed=frozenset(int(r) for r in self._slot_rank[after]),
            newly_confirmed=frozenset(int(r) for r in self._slot_rank[after & ~before]),
            cleared=frozenset(int(r) for r in self._slot_rank[before & ~after]),
            states=self._states(after | self._any_slow_mask()),
            peer_scores=peer_out, individual_scores=ind_out, ranks=ranks_arr,
            structure_ready=ready)

    def _judge(self, ms: _MetricState, slots: np.ndarray, x: np.ndarray, ind: np.ndarray,
               ind_above_noise: np.ndarray, ind_within_noise: np.ndarray, groups: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply the per-report rules for one metric; returns peer score, slow and unhealthy."""
        cfg = self.config
        has = ~np.isnan(x)
        med = median_of_others(x, groups)
        ref = med if cfg.reference == "median" else _group_min(x, groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            peer = ref / x
            log_ratio = np.log(x / med)
            rel_sigma = _update_noise(ms.rel_prev, ms.rel_sigma, ms.rel_obs, slots, log_ratio,
                                      self._alpha, math.log1p(cfg.min_effect))
            rel_slow = ((peer < cfg.threshold) & (log_ratio >= math.log1p(cfg.min_effect))
                        & (log_ratio >= cfg.noise_z * rel_sigma))
            use_ind = np.full(x.shape, cfg.individual == "always")
            if cfg.individual == "no_peers":
                use_ind = np.isnan(med)
            ind_slow = (use_ind & (ind < cfg.individual_threshold)
                        & (1.0 / ind - 1.0 >= cfg.min_effect) & ind_above_noise)
            # Unhealthy (for clearing): below clear_threshold and beyond one sigma of the
            # rank's own noise, so a noisy rank that recovered can still clear.
            band = min(1.0, cfg.noise_z)  # no noise band when the noise gate is off
            bad = has & (((peer < cfg.clear_threshold) & ~(log_ratio < band * rel_sigma))
                         | (use_ind & (ind < cfg.clear_threshold)
                            & ~(ind_within_noise & (band > 0))))
        # Persistence windows: shift in this report's marks for the ranks that have data.
        sl = slots[has]
        for window, marks in ((ms.rel_window, rel_slow), (ms.ind_window, ind_slow)):
            window[sl] = ((window[sl] << np.uint32(1)) | marks[has].astype(np.uint32)) & ms.mask
        newly_rel = (_popcount(ms.rel_window, cfg.n) >= cfg.k) & (ms.confirmed_by == 0)
        ms.confirmed_by[newly_rel] = 1
        newly_ind = (_popcount(ms.ind_window, cfg.n) >= cfg.k) & (ms.confirmed_by == 0)
        ms.confirmed_by[newly_ind] = 2
        return peer, rel_slow | ind_slow, bad

    # ------------------------------------------------------------------------------- helpers
    @staticmethod
    def _is_flagged(ms: _MetricState) -> bool:
        return bool(ms.confirmed_by.any() or ms.rel_window.any() or ms.ind_window.any())

    def _mark(self, metric: str, ms: _MetricState) -> None:
        if self._is_flagged(ms):
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
        stale = []
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

    def _groups_for(self, ms: _MetricState) -> np.ndarray | None:
        if self._role_of:
            if self._role_groups is None or self._role_groups.size != self._slot_rank.size:
                # A rank without a declared role is alone in its group (no peers).
                self._role_groups = np.array(
                    [self._role_of.get(int(r), -1 - i) for i, r in enumerate(self._slot_rank)],
                    dtype=np.int64)
            return self._role_groups
        if not self.config.learn_structure:
            return np.zeros(self._slot_rank.size, dtype=np.int64)
        return ms.groups

    def _slots(self, ranks: np.ndarray) -> np.ndarray:
        if self._last_ranks is not None and np.array_equal(ranks, self._last_ranks):
            return self._last_slots  # type: ignore[return-value]
        slots = np.empty(ranks.size, dtype=np.int64)
        for i, r in enumerate(ranks.tolist()):
            s = self._slot_of.get(r)
            if s is None:
                s = self._slot_of[r] = len(self._slot_of)
            slots[i] = s
        if len(self._slot_of) > self._slot_rank.size:
            new = np.array(list(self._slot_of), dtype=np.int64)
            self._healthy_streak = np.concatenate(
                [self._healthy_streak, np.zeros(new.size - self._slot_rank.size, np.int64)])
            self._slot_rank = new
        if np.unique(slots).size != slots.size:
            raise ValueError("`ranks` must not repeat a rank")
        self._last_ranks, self._last_slots = ranks.copy(), slots
        return slots

    def _confirmed_mask(self) -> np.ndarray:
        mask = np.zeros(self._slot_rank.size, dtype=bool)
        for metric in self._flagged:
            ms = self._metrics[metric]
            mask[: ms.confirmed_by.size] |= ms.confirmed_by > 0
        return mask

    def _any_slow_mask(self) -> np.ndarray:
        mask = np.zeros(self._slot_rank.size, dtype=bool)
        for ms in (self._metrics[m] for m in self._flagged):
            size = ms.rel_window.size
            mask[:size] |= (ms.rel_window | ms.ind_window) > 0
        return mask

    def _confirmed_set(self) -> frozenset[int]:
        return frozenset(int(r) for r in self._slot_rank[self._confirmed_mask()])

    def _states(self, mask: np.ndarray) -> dict[int, RankState]:
        out = {}
        names = {1: "relative", 2: "individual"}
        for s in np.flatnonzero(mask):
            reasons, counts = {}, {}
            for metric in sorted(self._flagged):  # the others have no marks
                ms = self._metrics[metric]
                if s >= ms.confirmed_by.size:
                    continue
                if ms.confirmed_by[s]:
                    reasons[metric] = names[int(ms.confirmed_by[s])]
                c = int(max(bin(int(ms.rel_window[s])).count("1"),
                            bin(int(ms.ind_window[s])).count("1")))
                if c:
                    counts[metric] = c
            rank = int(self._slot_rank[s])
            out[rank] = RankState(rank=rank, confirmed=bool(reasons), reasons=reasons,
                                  slow_reports=counts,
                                  healthy_streak=int(self._healthy_streak[s]))
        return out


def observation_from_report(report: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The policy's input from a gathered `Report`: ranks and per-metric time-like values.

    Sections use ``section_medians_ms`` (absolute medians, so the personal baseline also sees
    job-wide changes) and fall back to ``1 / section relative score``; the GPU metric uses
    ``1 / gpu relative score`` (the rank's time over the reference, the same for every rank of a
    report). Ranks come from the score dicts; values a rank lacks are NaN.
    """
    metrics: dict[str, tuple[Mapping[int, float], bool]] = {}  # values, invert them
    gpu_rel = getattr(report, "gpu_relative_perf_scores", None) or {}
    if gpu_rel:
        metrics[GPU_METRIC] = (gpu_rel, True)
    medians = getattr(report, "section_medians_ms", None) or {}
    sec_rel = getattr(report, "section_relative_perf_scores", None) or {}
    for name in sorted(set(medians) | set(sec_rel)):
        if medians.get(name):
            metrics[f"section:{name}"] = (medians[name], False)
        else:
            metrics[f"section:{name}"] = (sec_rel[name], True)
    all_ranks = set(getattr(report, "rank_to_node", None) or {})
    for by_rank, _ in metrics.values():
        all_ranks.update(by_rank)
    order = sorted(all_ranks)
    ranks = np.array(order, dtype=np.int64)
    times = {}
    for metric, (by_rank, invert) in metrics.items():
        if len(by_rank) == len(order) and list(by_rank) == order:  # the gathered layout: fast
            values = np.fromiter(by_rank.values(), dtype=np.float64, count=len(order))
        else:
            values = np.array([by_rank.get(r, np.nan) for r in order], dtype=np.float64)
        if invert:  # a score (reference / time): its inverse is time-like
            with np.errstate(divide="ignore", invalid="ignore"):
                values = np.where(np.isfinite(values) & (values > 0), 1.0 / values, np.nan)
        times[metric] = values
    return ranks, times


def make_policy(policy: StragglerPolicy | PolicyConfig | bool | None,
                roles: Mapping[int, Hashable] | None = None) -> StragglerPolicy | None:
    """A policy from the user's option: an instance, a config, True (defaults) or None/False.

    ``roles`` alone (with ``policy=None``) turns the default policy on with those roles.
    """
    if isinstance(policy, StragglerPolicy):
        if roles is not None:
            raise ValueError("`roles` must be given to the StragglerPolicy itself when `policy` "
                             "is a StragglerPolicy instance")
        return policy
    if isinstance(policy, PolicyConfig):
        return StragglerPolicy(policy, roles=roles)
    if policy is True or (policy is None and roles is not None):
        return StragglerPolicy(PolicyConfig(), roles=roles)
    if policy is None or policy is False:
        return None
    raise ValueError(f"`policy={policy!r}` must be a PolicyConfig, a StragglerPolicy, True, "
                     "False or None")


def __getattr__(name: str) -> Any:
    # `apply_policy` lived here; it builds report types, so it is in straggler.reporting now.
    return forward(__name__, name)
