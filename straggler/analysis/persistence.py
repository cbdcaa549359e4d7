"""Per-metric memory of the persistence policy: windows, baselines, noise, and one report's rules.

`MetricState` holds, for one metric (the GPU score or a section) and every rank slot, the
persistence windows (bit fields: bit i set = slow i reports ago), the decaying personal
baseline, the report-to-report noise estimates and the learned peer groups. `MetricState.judge`
applies the per-report rules of `straggler.analysis.policy` (docs/policy.md) to it. Pure numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .peers import group_min, median_of_others
from .policy_config import PolicyConfig
from .recent import MIN_RECENT_STEPS, RECENT_FRACTION, recent_count, recent_log_ratio
from .tails import tail_evidence, tail_suspect

__all__ = ["MIN_HISTORY", "MetricState", "fast_step_ratio", "popcount", "update_noise",
           "window_noise"]

#: Successive differences a rank needs before its individual rule may fire.
MIN_HISTORY = 2
# Upper estimate of a rank's noise from m successive differences: sigma * (1 + a/sqrt(m) + b/m).
# The b/m term guards the first reports, when a handful of differences can be far too small.
_SQRT_TERM = 1.0
_LINEAR_TERM = 3.0

#: A window under this share of the typical steps (an early report's) does not update the noise
#: between reports (replayed early reports: 10 % never confirmed in 7 % of the runs without) ...
_SHORT_WINDOW = 0.3
#: ... unless this many came in a row (the windows got shorter for good).
_SHORT_STREAK = 8
#: A window of at most this share of the interval's steps (`MetricState.interval_steps`) is an
#: early report's: `straggler.report_cycle.early_window` makes them at most half the interval.
_EARLY_WINDOW = 0.55
#: More windows that short in a row than early reports may come in a row
#: (`straggler.report_cycle.MAX_EARLY_REPORTS`, 4): the interval's steps got fewer for good.
_EARLY_STREAK = 5
#: ``interval_steps`` follows the full windows' steps with this weight (an exponential mean).
_INTERVAL_WEIGHT = 0.2
_CONFIRMED_BY = {1: "relative", 2: "individual", 3: "culprit"}  # MetricState.confirmed_by codes

#: The recent part of each rank's window: its median and its fast steps (NaN: unknown).
Recent = tuple[np.ndarray, np.ndarray]
# A pending warm-up report: slots, times, individual scores, above-noise and within-noise masks,
# the window's steps, the within-window standard errors, the fast steps (`fast_step_ratio`), the
# recent part (`straggler.analysis.recent`), the ranks on which the section is negligible,
# whether the window was an early report's (None: unknown).
Pending = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, np.ndarray,
                np.ndarray | None, Recent | None, np.ndarray | None, bool | None]


def popcount(bits: np.ndarray, n: int) -> np.ndarray:
    """Number of set bits among the low ``n`` bits of each element."""
    count = np.zeros(bits.shape, dtype=np.int64)
    for i in range(n):
        count += (bits >> np.uint32(i)) & np.uint32(1)
    return count


def update_noise(prev: np.ndarray, sigma: np.ndarray, obs: np.ndarray, slots: np.ndarray,
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


def fast_step_ratio(log_ratio: np.ndarray, low: np.ndarray | None, groups: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The smaller of ``log_ratio`` (a rank's median to its peers') and its fast steps' log
    ratio to its peers' (``low``: each rank's low percentile of the window, NaN: unknown), and
    where the fast steps were read.

    Interference (descheduling, a busy neighbour) lengthens some of a healthy rank's steps: its
    median moves, its fastest steps much less. A straggler's slowdown (slower compute, a host
    stall, slower data) lengthens every step, its fast ones too. Where a rank or all its peers
    lack a low percentile, the median's ratio as it is.
    """
    if low is None:
        return log_ratio, np.zeros(log_ratio.shape, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        lw = np.where(low > 0, low, np.nan)
        low_ratio = np.log(lw / median_of_others(lw, groups))
    read = np.isfinite(low_ratio)
    return np.where(read, np.fmin(log_ratio, low_ratio), log_ratio), read


def window_noise(se: np.ndarray | None, groups: np.ndarray) -> np.ndarray:
    """The within-window standard error of each rank's log ratio to its peers' median.

    ``se``: each rank's standard error of its log value from the window's samples. The peers'
    median of ``m`` values has about ``pi / 2 / m`` times their typical variance (at most 1).
    NaN where the rank or all its peers lack one.
    """
    if se is None:
        return np.full(groups.shape, np.nan)
    var = np.where(np.isfinite(se) & (se >= 0), se * se, np.nan)
    peers_var = median_of_others(var, groups)
    has = (~np.isnan(var)).astype(np.float64)
    peers = np.zeros(groups.shape)
    for g in np.unique(groups):
        members = groups == g
        peers[members] = has[members].sum() - has[members]
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = peers_var * np.minimum(1.0, (math.pi / 2.0) / np.maximum(peers, 1.0))
        return np.sqrt(var + ref)


class MetricState:
    """Per-metric arrays over rank slots: windows, baselines, noise estimates, learned groups."""

    #: The arrays `state` saves and `from_state` restores, in that order.
    ARRAYS = ("rel_window", "ind_window", "baseline", "confirmed_by", "rel_prev", "rel_sigma",
              "rel_obs", "ind_prev", "ind_sigma", "ind_obs", "evidence", "ratio_prev",
              "full_evidence", "slow_span", "early_evidence", "run_span", "chain_span",
              "run_chain")

    def __init__(self, n: int, size: int, tail: bool = False) -> None:
        #: An upper-quartile metric: judged with `PolicyConfig.tail_min_effect`.
        self.tail = tail
        # Persistence windows as bit fields: bit i set = slow i reports ago (for ranks with data).
        self.mask = np.uint32((1 << n) - 1)
        self.n = n
        self.rel_window = np.zeros(size, dtype=np.uint32)
        self.ind_window = np.zeros(size, dtype=np.uint32)
        self.baseline = np.full(size, np.nan)  # log time
        self.confirmed_by = np.zeros(size, dtype=np.int8)  # 0 no, 1 relative, 2 individual,
        # 3 culprit (the "culprit" metric: the collective waits)
        # Noise estimates: last value and EW mean |successive difference| / 1.128 (= sigma for
        # Gaussian noise), for the log ratio to the peers and for the log time.
        self.rel_prev = np.full(size, np.nan)
        self.rel_sigma = np.zeros(size)
        self.rel_obs = np.zeros(size, dtype=np.int64)
        self.ind_prev = np.full(size, np.nan)
        self.ind_sigma = np.zeros(size)
        self.ind_obs = np.zeros(size, dtype=np.int64)
        # The sequential test (rule "evidence"): each rank's one-sided CUSUM of its standardised
        # log ratio to its peers, and the pooled per-step noise of that ratio (one scalar: every
        # rank's log ratio estimates it, so a straggler cannot raise its own bar).
        self.evidence = np.zeros(size)
        # Since the evidence was last 0: whether a full window (not an early report's) added to
        # it, and how much of an interval the windows that added to it span (an early one its
        # steps over the interval's; `PolicyConfig.early_confirm_span`).
        self.full_evidence = np.zeros(size, dtype=bool)
        # ... and whether an early window did (such a chain is judged by early_confirm_span,
        # not by min_slow_s).
        self.early_evidence = np.zeros(size, dtype=bool)
        # ... and the share of an interval since it was last 0, every window counted
        # (`PolicyConfig.min_slow_s`: how long the rank has been slow).
        self.chain_span = np.zeros(size)
        self.slow_span = np.zeros(size)
        # The span of the unbroken run of windows that added to the evidence, up to this
        # report (`PolicyConfig.early_confirm_run`).
        self.run_span = np.zeros(size)
        # ... and the share of an interval since the latest full window that added nothing
        # (every window counted whole: `PolicyConfig.early_finish_min_s`).
        self.run_chain = np.zeros(size)
        # Steps of a full report window (early windows left out), and the early-looking
        # windows in a row (not saved: transient).
        self.interval_steps = math.nan
        self.early_windows = 0
        #: The report interval in seconds (`StragglerPolicy.interval_s`; NaN: unknown), which
        #: turns ``chain_span`` into seconds for `PolicyConfig.min_slow_s`.
        self.interval_s = math.nan
        self.ratio_prev = np.full(size, np.nan)
        self.typical_steps = math.nan
        self.noise_reports = 0
        self.step_noise = math.nan
        self.step_noise_obs = 0
        self.short_windows = 0  # early reports' windows in a row (not saved: transient)
        self.groups: np.ndarray | None = None
        # Suspects named during the structure warm-up from the window's own evidence (against
        # every other rank), so an early report can follow before the groups are known: the
        # warm-up reports that named each rank (0: not a suspect).
        self.provisional = np.zeros(size, dtype=np.int32)
        self.warmup_levels: list[np.ndarray] = []
        self.pending: list[Pending] = []

    def grow(self, size: int) -> None:
        """Make room for ``size`` rank slots (new ranks start with no history)."""
        extra = size - self.baseline.size
        if extra <= 0:
            return
        self.rel_window = np.concatenate([self.rel_window, np.zeros(extra, np.uint32)])
        self.ind_window = np.concatenate([self.ind_window, np.zeros(extra, np.uint32)])
        self.baseline = np.concatenate([self.baseline, np.full(extra, np.nan)])
        self.confirmed_by = np.concatenate([self.confirmed_by, np.zeros(extra, np.int8)])
        for name in ("rel_prev", "ind_prev", "ratio_prev"):
            setattr(self, name, np.concatenate([getattr(self, name), np.full(extra, np.nan)]))
        self.provisional = np.concatenate([self.provisional, np.zeros(extra, np.int32)])
        self.full_evidence = np.concatenate([self.full_evidence, np.zeros(extra, bool)])
        self.early_evidence = np.concatenate([self.early_evidence, np.zeros(extra, bool)])
        for name in ("rel_sigma", "ind_sigma", "rel_obs", "ind_obs", "evidence", "slow_span",
                     "run_span", "chain_span", "run_chain"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.zeros(extra, old.dtype)]))
        if self.groups is not None:
            self.groups = np.concatenate([self.groups, np.zeros(extra, np.int64)])

    def _min_effect(self, cfg: PolicyConfig) -> float:
        """The effect-size gate of this metric, against peers and against its own past:
        `PolicyConfig.tail_min_effect` for an upper quartile, `PolicyConfig.min_effect`
        otherwise."""
        return cfg.tail_min_effect if self.tail else cfg.min_effect

    @property
    def flagged(self) -> bool:
        """Whether any rank has a slow mark or a confirmation on this metric."""
        return bool(self.confirmed_by.any() or self.rel_window.any() or self.ind_window.any()
                    or self.provisional.any())

    def marks(self, slot: int) -> tuple[str | None, int]:
        """The rule that confirmed ``slot`` ("relative", "individual" or None) and its slow
        reports among the last ``n`` (the larger count of the two rules; during the structure
        warm-up, the warm-up reports that named it a suspect)."""
        if slot >= self.confirmed_by.size:
            return None, 0
        reason = _CONFIRMED_BY.get(int(self.confirmed_by[slot]))
        slow = max(bin(int(self.rel_window[slot])).count("1"),
                   bin(int(self.ind_window[slot])).count("1"), int(self.provisional[slot]))
        return reason, slow

    def suspected_by(self, slot: int) -> str | None:
        """Why ``slot`` looks slow on this metric without being confirmed on it: the rules whose
        window holds a slow report ("relative", "individual", both joined by ", "), or
        "warm-up" (slower than the median of the others while the peer groups are learned);
        None when neither."""
        if slot >= self.confirmed_by.size:
            return None
        rules = [name for name, window in (("relative", self.rel_window),
                                           ("individual", self.ind_window)) if window[slot]]
        if self.provisional[slot]:
            rules.append("warm-up")
        return ", ".join(rules) or None

    # -- saving and restoring ------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The arrays and groups as plain lists (pending warm-up reports are not kept)."""
        entry: dict[str, Any] = {k: getattr(self, k).tolist() for k in self.ARRAYS}
        entry["groups"] = None if self.groups is None else self.groups.tolist()
        entry["step_noise"] = None if math.isnan(self.step_noise) else self.step_noise
        entry["step_noise_obs"] = self.step_noise_obs
        entry["noise_reports"] = self.noise_reports
        entry["typical_steps"] = None if math.isnan(self.typical_steps) else self.typical_steps
        return entry

    @classmethod
    def from_state(cls, entry: Mapping[str, Any], n: int, size: int, saved_n: int,
                   tail: bool = False) -> MetricState:
        """A state saved by `state` with ``saved_n`` (ValueError on a shape mismatch)."""
        ms = cls(n, size, tail)
        for key in cls.ARRAYS:
            old = getattr(ms, key)
            if key not in entry and key in ("evidence", "ratio_prev", "full_evidence",
                                            "slow_span", "early_evidence", "run_span",
                                            "chain_span", "run_chain"):  # saved before the rule
                continue
            value = np.asarray(entry[key], dtype=old.dtype)
            if value.shape != old.shape:
                raise ValueError(f"{key} has shape {value.shape}")
            setattr(ms, key, value)
        if saved_n != n:  # another window length: start the windows anew
            ms.rel_window[:] = 0
            ms.ind_window[:] = 0
        else:
            ms.rel_window &= ms.mask
            ms.ind_window &= ms.mask
        if entry["groups"] is not None:
            ms.groups = np.asarray(entry["groups"], dtype=np.int64)
        noise = entry.get("step_noise")
        ms.step_noise = math.nan if noise is None else float(noise)
        ms.step_noise_obs = int(entry.get("step_noise_obs", 0))
        ms.noise_reports = int(entry.get("noise_reports", 0))
        typical = entry.get("typical_steps")
        ms.typical_steps = math.nan if typical is None else float(typical)
        return ms

    # -- one report ----------------------------------------------------------------------------
    def individual(self, cfg: PolicyConfig, alpha: float, slots: np.ndarray, logx: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Individual scores against the decaying baseline, then move the baseline.

        Returns the scores and two masks: the slowdown is above ``noise_z`` times the rank's own
        noise (with enough history), and it is within one sigma of that noise.
        """
        base = self.baseline[slots]
        ind = np.exp(base - logx)
        sigma = update_noise(self.ind_prev, self.ind_sigma, self.ind_obs, slots, logx, alpha,
                             math.log1p(cfg.min_effect))
        with np.errstate(invalid="ignore"):
            # The baseline and the noise estimate need a few reports before they mean much.
            above = (-np.log(ind) >= cfg.noise_z * sigma) & (self.ind_obs[slots] > MIN_HISTORY)
            within = -np.log(ind) < sigma
        has = ~np.isnan(logx)
        fresh = has & np.isnan(base)
        self.baseline[slots[fresh]] = logx[fresh]
        upd = has & ~np.isnan(base)
        self.baseline[slots[upd]] = base[upd] + alpha * (logx[upd] - base[upd])
        return ind, above, within

    def judge(self, cfg: PolicyConfig, alpha: float, slots: np.ndarray, x: np.ndarray,
              ind: np.ndarray, ind_above_noise: np.ndarray, ind_within_noise: np.ndarray,
              groups: np.ndarray, steps: float = math.nan, se: np.ndarray | None = None,
              low: np.ndarray | None = None, recent: Recent | None = None,
              no_reference: np.ndarray | None = None, negligible: np.ndarray | None = None,
              early: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply the per-report rules; returns the peer scores and the slow and unhealthy masks.

        ``steps``: the steps behind each rank's value in this window (NaN: unknown, then the
        noise is per report); the evidence rule's noise scales as ``1 / sqrt(steps)``.
        ``low``: each rank's fast steps in the window (its 5th percentile,
        `straggler.timing.registry.LOW_PERCENTILE`; NaN or None: unknown): the evidence rule
        counts a rank as slower than its peers by the smaller of its median's and its fast
        steps' log ratio (`fast_step_ratio`).
        ``recent``: each rank's median and fast steps of the last part of its window
        (`straggler.analysis.recent`; None: unknown): a rank whose recent steps are slower than
        its peers' recent steps is a suspect in this report (`_recent_slow`), and the report's
        evidence is the larger of the whole window's z and ``recent_evidence_weight`` times the
        recent part's (the recent steps belong to this window only: no step counts twice).
        ``no_reference``: ranks whose peers are all confirmed stragglers
        (`straggler.analysis.peers.only_confirmed_peers`): their ratio to a straggler is no
        evidence (it drains theirs) and no health either: they are not judged on this metric
        (not against their own past either: a job-wide slowdown would look like one).
        ``negligible``: ranks on which this section is negligible (under
        `PolicyConfig.min_section_share` of their longest section: a section of microseconds
        cannot make a rank a straggler): not judged on this metric either, as ``no_reference``.
        ``early``: whether the window was an early report's (the detector's cadence says so);
        None, or with `PolicyConfig.early_from_steps`: read from its steps (`_early`).
        """
        has = ~np.isnan(x)
        no_ref = np.zeros(x.shape, dtype=bool) if no_reference is None else no_reference
        if negligible is not None:
            no_ref = no_ref | negligible
        med = median_of_others(x, groups)
        ref = med if cfg.reference == "median" else group_min(x, groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            peer = ref / x
            log_ratio = np.log(x / med)
            rel_sigma = update_noise(self.rel_prev, self.rel_sigma, self.rel_obs, slots,
                                     log_ratio, alpha, math.log1p(cfg.min_effect))
            effect = log_ratio >= math.log1p(self._min_effect(cfg))
            if cfg.rule == "evidence":
                # The job's noise, or a part of the rank's own when larger (a noisy but healthy
                # rank). Its own estimate is robust to a step change (update_noise), so a
                # straggler raises its bar only by a part of its noise, never by its slowdown.
                noise = np.maximum(self._report_noise(cfg, alpha, slots, log_ratio, steps),
                                   cfg.own_noise_weight * rel_sigma)
                # Clearing judges with the whole noise between reports: a recovered rank with
                # a lasting offset of a few per cent is healthy (hysteresis).
                clear_noise = noise
                # The evidence: the median's shift, at most its fast steps' (an interfered
                # window lengthens some steps; a straggler lengthens every step) ...
                slower, fast = fast_step_ratio(log_ratio, low if cfg.fast_steps else None,
                                               groups)
                # ... which lets the window's own error count for more than the median alone.
                factor = np.where(fast, cfg.fast_window_noise_factor, cfg.window_noise_factor)
                weight = np.where(fast, cfg.fast_report_noise_weight, cfg.report_noise_weight)
                within = window_noise(se, groups)
                if steps < cfg.spread_min_steps:  # too few steps to judge by their spread alone
                    weight = np.maximum(weight, 1.0)
                noise = np.where(np.isfinite(within),
                                 np.maximum(factor * within,
                                            np.where(np.isfinite(noise), weight * noise, 0.0)),
                                 noise)
                noise = np.maximum(noise, cfg.noise_floor)
                evidence_noise = noise
                if self.tail:  # an upper quartile: evidence from clear windows only
                    slower, evidence_noise = tail_evidence(cfg, slower, noise, steps)
                shows = slower >= math.log1p(self._min_effect(cfg))
                z = slower / evidence_noise
                z_clear = log_ratio / np.where(np.isfinite(clear_noise),
                                               np.maximum(clear_noise, noise), noise)
                rel_slow = (peer < cfg.threshold) & shows & (z >= cfg.slow_z)
                whole_slow = rel_slow.copy()  # slow as a whole (confirm_slow_only)
                recent_slow = np.zeros(x.shape, dtype=bool)
                z_evidence, shows_evidence = z, shows
                full = not self._early(steps, None if cfg.early_from_steps else early)
                span = np.full(x.shape, self._span(steps, full))  # of the interval
                if recent is not None and cfg.recent_steps and not self.tail:
                    recent_slow, z_recent, shows_recent = self._recent_slow(
                        cfg, recent, groups, steps, noise)
                    rel_slow |= recent_slow
                    if cfg.recent_evidence_weight > 0:
                        weighted = cfg.recent_evidence_weight * z_recent
                        by_recent = np.isfinite(z_recent) & ~(z >= weighted)
                        z_evidence = np.where(by_recent, weighted, z)
                        shows_evidence = shows | shows_recent
                        span = np.where(by_recent, RECENT_FRACTION * span, span)
                z_whole = z
                if steps < cfg.evidence_full_steps:  # a few steps are a few steps' evidence
                    cap = cfg.evidence_z_cap * math.sqrt(steps / cfg.evidence_full_steps)
                    z_evidence, z_whole = np.minimum(z_evidence, cap), np.minimum(z, cap)
                z_evidence = np.where(no_ref, 0.0, z_evidence)  # a straggler is no reference
                self._accumulate(cfg, slots, z_evidence, shows_evidence, full, span,
                                 self._span(steps, full))
                # The whole window adds to the evidence (its recent part alone never confirms).
                whole_adds = shows & ~no_ref & (np.minimum(z_whole, cfg.evidence_z_cap)
                                                > cfg.evidence_drift)
                if self.tail:  # a suspect only with half the evidence in (early reports)
                    rel_slow &= tail_suspect(cfg, self.evidence[slots])
            else:
                rel_slow = (peer < cfg.threshold) & effect & (log_ratio >= cfg.noise_z * rel_sigma)
                whole_slow = rel_slow
            rel_slow &= ~no_ref
            whole_slow &= ~no_ref
            use_ind = np.full(x.shape, cfg.individual == "always")
            if cfg.individual == "no_peers":
                use_ind = np.isnan(med)
            if negligible is not None:  # nor against its own past
                use_ind &= ~negligible
            ind_slow = (use_ind & (ind < cfg.individual_threshold)
                        & (1.0 / ind - 1.0 >= self._min_effect(cfg)) & ind_above_noise)
            # Unhealthy (for clearing): below clear_threshold and beyond one sigma of the
            # rank's own noise, so a noisy rank that recovered can still clear.
            band = min(1.0, cfg.noise_z)  # no noise band when the noise gate is off
            # Unhealthy: a slow report under the evidence rule; beyond one sigma of the rank's
            # own noise under k_of_n.
            rel_bad = (((peer < cfg.clear_threshold) & effect & (z_clear >= 0.75 * cfg.slow_z))
                       | recent_slow if cfg.rule == "evidence"
                       else (peer < cfg.clear_threshold) & ~(log_ratio < band * rel_sigma))
            bad = has & ((rel_bad & ~no_ref)
                         | (use_ind & (ind < cfg.clear_threshold)
                            & ~(ind_within_noise & (band > 0))))
        # Persistence windows: shift in this report's marks for the ranks that have data.
        sl = slots[has]
        for window, marks in ((self.rel_window, rel_slow), (self.ind_window, ind_slow)):
            window[sl] = ((window[sl] << np.uint32(1)) | marks[has].astype(np.uint32)) & self.mask
        if self.tail and cfg.rule == "evidence":  # a tail suspect lasts while its evidence does
            self.rel_window[sl[~tail_suspect(cfg, self.evidence[sl])]] = 0
        if cfg.rule == "evidence":
            # The report that brings the evidence to the threshold confirms when its whole
            # window adds to it (z over the drift); with confirm_slow_only, or a window of
            # fewer than spread_min_steps steps (its z is less sure), only when it is slow on
            # its own (z >= slow_z).
            slow_only = cfg.confirm_slow_only or not steps >= cfg.spread_min_steps
            by = whole_slow if slow_only else whole_adds
            confirming = np.zeros(self.confirmed_by.shape, dtype=bool)
            confirming[slots[has]] = by[has]
            newly_rel = (self.evidence >= cfg.evidence_threshold) & confirming \
                & (self.confirmed_by == 0)
            # Early windows alone: only once they span early_confirm_span of an interval and
            # early_confirm_min_s seconds; early windows finish a full window's evidence once
            # the windows since the latest full one that added nothing have lasted
            # early_finish_min_s, where windows hold under early_finish_steps (a healthy rank's
            # burst lasts seconds: a full window and two early ones of a 3 s interval).
            alone = self.run_span if cfg.early_confirm_run else self.slow_span
            alone_span, finish = cfg.early_confirm_span, 0.0
            if self.interval_s > 0:
                alone_span = max(alone_span, cfg.early_confirm_min_s / self.interval_s)
                if not self.interval_steps >= cfg.early_finish_steps > 0:  # NaN: unknown
                    finish = min(cfg.early_finish_min_s / self.interval_s, cfg.min_slow_windows)
            finished = ~self.early_evidence | (self.run_chain >= finish - 1e-9)
            newly_rel &= np.where(self.full_evidence, finished, alone >= alone_span - 1e-9)
            # Full windows alone: only once the rank has been slow min_slow_s seconds (since its
            # evidence was last 0, every window counted; a healthy rank's burst lasts seconds:
            # two windows of a short interval), or min_slow_windows windows.
            if cfg.min_slow_s > 0 and self.interval_s > 0:
                needed = min(cfg.min_slow_s / self.interval_s, cfg.min_slow_windows)
                newly_rel &= self.early_evidence | (self.chain_span >= needed - 1e-9)
            if self.tail and cfg.tail_full_window and not full:
                newly_rel[:] = False  # a tail is confirmed by a full window's steps
        else:
            newly_rel = (popcount(self.rel_window, cfg.n) >= cfg.k) & (self.confirmed_by == 0)
        self.confirmed_by[newly_rel] = 1
        newly_ind = (popcount(self.ind_window, cfg.n) >= cfg.k) & (self.confirmed_by == 0)
        self.confirmed_by[newly_ind] = 2
        return peer, rel_slow | ind_slow, bad

    def _recent_slow(self, cfg: PolicyConfig, recent: Recent, groups: np.ndarray,
                     steps: float, noise: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The recent part of the window (`straggler.analysis.recent`): the ranks it shows slow
        (suspects in this report), its z and its effect-size mask.

        The recent part's log ratio to the peers' recent parts (at most its fast steps', as
        the whole window's) is judged with the window's ``noise`` widened by ``sqrt(steps /
        recent steps)`` (a quarter of the steps: twice the noise), by the same gates as the
        whole window. A recent part under `MIN_RECENT_STEPS` (an early report's) is not
        judged (z NaN).
        """
        k = recent_count(steps)
        if k < MIN_RECENT_STEPS:
            return (np.zeros(noise.shape, dtype=bool), np.full(noise.shape, np.nan),
                    np.zeros(noise.shape, dtype=bool))
        ratio, slower = recent_log_ratio(recent[0], recent[1], groups)
        with np.errstate(invalid="ignore"):
            z = slower / (noise * math.sqrt(steps / k))
            shows = slower >= math.log1p(cfg.min_effect)
            slow = (np.exp(-ratio) < cfg.threshold) & shows & (z >= cfg.slow_z)
        return slow, z, shows

    def judge_culprits(self, cfg: PolicyConfig, slots: np.ndarray, share: np.ndarray,
                       steps: float = math.nan) -> tuple[np.ndarray, np.ndarray]:
        """One report of the collective waits (the ``"culprit"`` metric); returns the slow and
        unhealthy masks.

        ``share``: per rank of ``slots``, the share of the job's time lost waiting for it when
        it is a culprit of the report (`straggler.analysis.waits`), 0 when it is observed and is
        not one, NaN when not observed. A culprit report adds ``evidence_z_cap * min(1, share /
        culprit_full_share) - evidence_drift`` to the rank's evidence (the cap scaled by
        ``sqrt(steps / culprit_full_steps)`` for a window of fewer steps), another report
        ``-evidence_drift``; a culprit report with the evidence at ``evidence_threshold``
        confirms the rank (reason ``"culprit"``). A rank slow outside every section shows here.
        """
        has = ~np.isnan(share)
        culprit = has & (share > 0)
        cap = cfg.evidence_z_cap
        if cfg.culprit_full_steps > 0 and math.isfinite(steps) and steps > 0:
            cap *= math.sqrt(min(1.0, steps / cfg.culprit_full_steps))
        with np.errstate(invalid="ignore"):
            z = np.where(culprit, cap * np.minimum(1.0, share / cfg.culprit_full_share), 0.0)
        step = z - cfg.evidence_drift
        sl = slots[has]
        self.evidence[sl] = np.maximum(0.0, self.evidence[sl] + step[has])
        self.rel_window[sl] = ((self.rel_window[sl] << np.uint32(1))
                               | culprit[has].astype(np.uint32)) & self.mask
        hit = np.zeros(self.confirmed_by.shape, dtype=bool)
        hit[slots[culprit]] = True
        newly = hit & (self.evidence >= cfg.evidence_threshold) & (self.confirmed_by == 0)
        self.confirmed_by[newly] = 3
        return culprit, culprit

    def provisional_suspects(self, cfg: PolicyConfig, slots: np.ndarray, x: np.ndarray,
                             se: np.ndarray, negligible: np.ndarray | None = None) -> None:
        """Name suspects in a warm-up report (no groups yet): a rank whose window is slower than
        the median of all the others by the effect-size gate and by ``slow_z`` times its
        within-window noise (`window_noise`). Only the early-report signal: no evidence, no
        confirmation (the warm-up's reports are judged once the groups are known). A rank named
        stays a suspect until the warm-up ends: one early window that does not show it (97-119
        steps, live) would otherwise end the early reports, and the warm-up's last report came
        a full interval later."""
        if cfg.rule != "evidence" or self.tail:  # one tail window is no clear evidence
            return
        one = np.zeros(x.shape, dtype=np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            log_ratio = np.log(x / median_of_others(x, one))
            noise = np.maximum(cfg.window_noise_factor * window_noise(se, one), cfg.noise_floor)
            gate = math.log1p(self._min_effect(cfg))
            slow = (log_ratio >= gate) & (log_ratio / noise >= cfg.slow_z) & np.isfinite(noise)
        if negligible is not None:  # a negligible section names no suspect
            slow &= ~negligible
        self.provisional[slots[slow]] += 1

    def _report_noise(self, cfg: PolicyConfig, alpha: float, slots: np.ndarray,
                      log_ratio: np.ndarray, steps: float) -> float:
        """The noise of a healthy rank's log ratio in this report, pooled over the ranks.

        From successive reports: ``median |d_t - d_t-1| / (0.6745 sqrt 2)`` over the ranks
        (``d``: log ratio to the peers), so a straggler (one rank, or a few) does not raise the
        bar it is judged by, its onset counts once, and job-wide changes cancel. Averaged over
        reports (running mean, then weight ``alpha``), each report's value clipped at 3 times
        the estimate; ``typical_steps`` follows the windows' step counts the same way. A report
        is judged with the estimate before it, inflated by ``1 + 1/sqrt(m)`` for ``m`` pooled
        differences and by ``sqrt(typical / steps)`` for a shorter window than usual (an early
        report), and at least ``noise_floor``. Real traces (docs/policy.md) show the noise of a
        window's median shrinking far slower than ``1/sqrt(steps)``: a longer window is not
        trusted more.
        """
        n = steps if steps > 0 and math.isfinite(steps) else math.nan
        prev = self.ratio_prev[slots]
        diffs = np.abs(log_ratio - prev)
        diffs = diffs[np.isfinite(diffs)]
        before, m, typical = self.step_noise, self.step_noise_obs, self.typical_steps
        weight = max(alpha, 1.0 / (self.noise_reports + 1.0))
        # An early report's window (under _SHORT_WINDOW of the typical steps) is judged with
        # the estimate but does not update it: its difference to a long window is mostly its
        # own sampling noise, which would raise the bar of every later report (docs/policy.md,
        # "Early reports"). After _SHORT_STREAK such windows in a row they are short for good.
        short = n < _SHORT_WINDOW * typical  # False while either is NaN
        learn = not short or self.short_windows >= _SHORT_STREAK
        self.short_windows = 0 if learn else self.short_windows + 1
        if learn:
            if short:  # the windows got shorter for good: their typical length anew
                typical = math.nan
            if diffs.size >= 1:
                now = float(np.median(diffs)) / (0.6745 * math.sqrt(2.0))
                if not math.isnan(before) and before > 0:
                    now = min(now, 3.0 * before)
                self.step_noise = now if math.isnan(before) else before + weight * (now - before)
                self.step_noise_obs = m + int(diffs.size)
                self.noise_reports += 1
            if not math.isnan(n):
                self.typical_steps = n if math.isnan(typical) \
                    else typical + weight * (n - typical)
            self.ratio_prev[slots] = np.where(np.isfinite(log_ratio), log_ratio, prev)
        if math.isnan(before):
            return math.inf  # nothing to judge with yet
        shorter = math.sqrt(typical / n) if n < typical else 1.0
        return max(before * (1.0 + 1.0 / math.sqrt(max(m, 1))) * shorter, cfg.noise_floor)

    def _early(self, steps: float, given: bool | None = None) -> bool:
        """Whether a window of ``steps`` is an early report's: ``given`` when the report says
        (the detector's cadence), else at most `_EARLY_WINDOW` of the interval's steps
        (``interval_steps``, learned here from the other windows; more than `_EARLY_STREAK` such
        windows in a row are the interval's own: its steps got fewer). The interval's steps are
        learned from the full windows."""
        if not (math.isfinite(steps) and steps > 0):
            return bool(given)
        if given is not None:
            if not given:
                known = self.interval_steps
                self.interval_steps = steps if not math.isfinite(known) \
                    else known + _INTERVAL_WEIGHT * (steps - known)
            self.early_windows = 0
            return given
        known = self.interval_steps
        early = math.isfinite(known) and steps <= _EARLY_WINDOW * known
        self.early_windows = self.early_windows + 1 if early else 0
        if early and self.early_windows <= _EARLY_STREAK:
            return True
        self.early_windows = 0
        self.interval_steps = steps if early or not math.isfinite(known) \
            else known + _INTERVAL_WEIGHT * (steps - known)
        return False

    def _span(self, steps: float, full: bool) -> float:
        """A window's share of the report interval: 1 for a full window, an early window's
        steps over the interval's."""
        known = self.interval_steps
        if full or not (math.isfinite(known) and known > 0):
            return 1.0
        return steps / known

    def _accumulate(self, cfg: PolicyConfig, slots: np.ndarray, z: np.ndarray,
                    effect: np.ndarray, full: bool | np.ndarray = True,
                    span: np.ndarray | None = None, window_span: float = 1.0) -> None:
        """One step of each rank's CUSUM: ``S = max(0, S + min(z, z_cap) - drift)``; and, since
        it was last 0, whether a ``full`` window (not an early report's) added to it, whether an
        early one did, and the share of an interval (``span``) the windows that did cover. With
        `PolicyConfig.early_confirm_run`, only the latest full window's word counts (a full
        window that adds nothing withdraws it), and early windows alone need an unbroken run of
        windows that added (``run_span``): evidence left from long ago does not let a burst's
        early windows confirm.

        A report below the effect-size gate adds at most 0 (weather never builds evidence).
        """
        ok = np.isfinite(z)
        step = np.minimum(np.where(ok, z, 0.0), cfg.evidence_z_cap) - cfg.evidence_drift
        step = np.where(effect | (step < 0), step, 0.0)
        sl = slots[ok]
        self.evidence[sl] = np.maximum(0.0, self.evidence[sl] + step[ok])
        going, added = self.evidence[sl] > 0, (step > 0)[ok]
        full = np.broadcast_to(full, z.shape)[ok]
        if cfg.early_confirm_run:  # the latest full window's word
            held = self.full_evidence[sl] & ~full
            self.full_evidence[sl] = going & ((added & full) | held)
        else:
            self.full_evidence[sl] = going & (self.full_evidence[sl] | (added & full))
        self.early_evidence[sl] = going & (self.early_evidence[sl] | (added & ~full))
        grew = np.where(added, 1.0 if span is None else span[ok], 0.0)
        self.slow_span[sl] = np.where(going, self.slow_span[sl] + grew, 0.0)
        self.run_span[sl] = np.where(going & added, self.run_span[sl] + grew, 0.0)
        self.chain_span[sl] = np.where(going, self.chain_span[sl] + window_span, 0.0)
        self.run_chain[sl] = np.where(going & (added | ~full), self.run_chain[sl] + window_span,
                                      0.0)

    def clear(self, hit: np.ndarray) -> None:
        """Forget the confirmation and the evidence of the ``hit`` slots (they recovered)."""
        self.confirmed_by[hit] = 0
        self.rel_window[hit] = 0
        self.ind_window[hit] = 0
        self.evidence[hit] = 0.0
        self.full_evidence[hit] = False
        self.early_evidence[hit] = False
        self.chain_span[hit] = 0.0
        self.slow_span[hit] = 0.0
        self.run_span[hit] = 0.0
        self.run_chain[hit] = 0.0
