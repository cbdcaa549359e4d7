"""`PolicyConfig`: the validated tunables of the persistence policy (`straggler.analysis.policy`).

Each default names the table row that supports it in docs/policy.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .._checks import check_bool, check_choice, check_fraction, check_int, check_number
from ..options import NOT_A_SHORTHAND

__all__ = ["INDIVIDUAL_MODES", "MIN_SECTION_SHARE", "PolicyConfig", "REFERENCES", "RULES"]

#: What a rank's peer score divides by: the peers' median time, or the group's fastest (NVRx).
REFERENCES = ("median", "fastest")
#: How slow reports become a confirmation: a sequential test of the evidence (a CUSUM of each
#: report's log ratio to the peers, in units of the pooled noise of a window of that many
#: steps), or NVRx-era persistence (``k`` slow reports among the last ``n``, own-noise gate).
RULES = ("evidence", "k_of_n")
#: When a rank is compared with its own decaying baseline.
INDIVIDUAL_MODES = ("no_peers", "always", "off")
#: A section whose median on a rank is under this share of that rank's longest section median
#: is negligible there: the policy (`PolicyConfig.min_section_share`) and the cause rules
#: (`straggler.analysis.causes.CauseRules.min_section_share`) leave it out for that rank.
MIN_SECTION_SHARE = 0.05


@dataclass(frozen=True)
class PolicyConfig:
    """Tunables of :class:`StragglerPolicy`; validated here, defaults from benchmarks/README.md.

    Each default names the table row that supports it in ``docs/policy.md``.
    ``initialize(policy=...)`` (converted by `straggler.options.to_options`): True means the
    defaults, None and False the policy off, a dict gives the fields.
    """

    _SHORTHANDS: ClassVar[str] = "True, False, None"

    #: Peer score (reference time / own time) below which a report counts as slow.
    threshold: float = 0.96
    #: Minimum slowdown versus the peer median for a report to count as slow (effect-size gate).
    min_effect: float = 0.04
    #: The same gate for a section's upper quartile (its ``:p75`` metric): a rank slow in one
    #: step in a few moves it far (3x in one step of five: +20-120 %), healthy tails move too.
    #: Replay at 5 s: intermittent 3x confirmed within 4 reports in 0.96 of the runs, no false
    #: alarm in 1,390 clean reports (docs/policy.md, "The tail test"). 10 turns it off.
    tail_min_effect: float = 0.15
    #: The tail test (`straggler.analysis.tails`): an upper-quartile window adds evidence only
    #: when it is slow on its own (``z >= slow_z``), any other drains it (False: every window
    #: adds ``z - drift``, as a median's does) ...
    tail_slow_only: bool = True
    #: ... and a window of ``n`` steps adds at most ``evidence_z_cap * sqrt(n /
    #: tail_full_steps)`` (0: no cap): a short window's upper quartile is no clear evidence.
    tail_full_steps: float = 150.0
    #: ... and only a full report window confirms an upper quartile, never an early report's:
    #: a healthy rank's forward tail, 25-148 % behind for 13 s, was confirmed by two early
    #: windows of 50 steps after one full window at 10 s per report (docs/policy.md, "Short
    #: report intervals"). False: any window that brings the evidence to the threshold.
    tail_full_window: bool = True
    #: A section (``"section:<name>"`` and its upper quartile) whose median on a rank is under
    #: this share of that rank's longest section median in the report (its step, when a section
    #: wraps the step) is negligible there: it builds no evidence, names no suspect and shows
    #: no ill health for that rank (its evidence drains), as the cause rules leave it out. A
    #: section of microseconds dips 20-30 % with the scheduler whatever the rank's speed: a
    #: healthy rank 0 was confirmed on a ``zero_grad`` of 10 us beside a 30 ms step. Judged on
    #: the rank's own time: a section a slowdown makes long enough to matter counts again.
    #: 0: every section counts (docs/policy.md, "Negligible sections").
    min_section_share: float = MIN_SECTION_SHARE
    #: ``"median"`` (median of the peers, robust) or ``"fastest"`` (NVRx: the group's fastest).
    reference: str = "median"
    #: ``"evidence"`` (the sequential test) or ``"k_of_n"`` (the earlier rule, for comparison).
    rule: str = "evidence"
    #: Evidence rule: a report is slow for a rank (a suspect) when its log ratio to the peer
    #: median is at least ``slow_z`` times the pooled noise of a window of that many steps ...
    slow_z: float = 2.0
    #: ... each report adds ``min(z, evidence_z_cap) - evidence_drift`` to the rank's evidence
    #: (never below 0; a report under the effect-size gate adds nothing positive) ...
    evidence_z_cap: float = 4.0
    evidence_drift: float = 0.5
    #: ... and the report that brings the evidence to this confirms the rank.
    evidence_threshold: float = 6.0
    #: A rank is judged with the job's noise or this fraction of its own noise, the larger:
    #: a noisy but healthy rank stays quiet, a noisy straggler is still seen.
    own_noise_weight: float = 0.5
    #: The within-window evidence: a report's noise is this many times the standard error of
    #: the rank's log ratio to its peers from the window's own samples (their quartiles and
    #: count: real steps are not independent, the factor covers it) ...
    window_noise_factor: float = 1.5
    #: ... or this share of the noise between successive reports, when larger.
    report_noise_weight: float = 0.6
    #: The evidence counts a rank slower than its peers by no more than its fast steps are
    #: (each window's 5th percentile, ``Report.section_low_ms``): interference lengthens some
    #: of a healthy rank's steps, a straggler every step. False: the median alone.
    fast_steps: bool = True
    #: Where the fast steps are read, the noise is judged with these instead of
    #: ``window_noise_factor`` and ``report_noise_weight`` (which stay for the rest: an upper
    #: quartile, a report without fast steps).
    fast_window_noise_factor: float = 1.0
    fast_report_noise_weight: float = 0.4
    #: Windows of few steps (long steps, or ``report_time_interval=0``): the quartiles of fewer
    #: than ``spread_min_steps`` steps misjudge a window's noise (one step has none), so such a
    #: window is judged with at least the whole noise between reports ...
    spread_min_steps: float = 40.0
    #: ... and a window of ``n < evidence_full_steps`` steps adds at most ``evidence_z_cap *
    #: sqrt(n / evidence_full_steps)``: one slow step is no straggler. Replay of the real
    #: traces cut into windows of 1-30 steps (docs/policy.md, "Windows of few steps"). 0: off.
    evidence_full_steps: float = 30.0
    #: The evidence also reads the recent part of each window (its last quarter of steps
    #: against the peers' last quarter, ``Report.section_recent_ms``): a straggler that starts
    #: inside a window shows in that window's report (a suspect, so early reports follow).
    #: False: the whole window alone.
    recent_steps: bool = True
    #: The recent part's z counts this much in the report's evidence (the larger of the whole
    #: window's z and this times the recent part's): at 1.0 the replayed clean runs confirmed
    #: 2 healthy ranks in 1,162 reports at 5 s, at 0.5 none (docs/policy.md). 0: suspects only.
    recent_evidence_weight: float = 0.5
    #: The report that brings a rank's evidence to ``evidence_threshold`` confirms it when its
    #: whole window adds to the evidence (its z over ``evidence_drift``, past the effect-size
    #: gate; a window of fewer than ``spread_min_steps`` steps only when slow on its own).
    #: True: only a report slow on its own (``z >= slow_z``) confirms (the previous rule), which
    #: held back 10 % stragglers whose last early window added evidence without being slow on
    #: its own: replayed mid-run onsets within 1.5 intervals 0.45 -> 0.46, idle 3-rank trace
    #: 0.88 -> 0.98, no false alarm either way (docs/policy.md, "Early reports").
    confirm_slow_only: bool = False
    #: Early reports' windows alone confirm a rank only once they span this share of an
    #: interval (their steps over a full window's); evidence a full report window added to
    #: confirms as before. Two early windows (3 s of a 5 s interval) fell inside one burst of a
    #: healthy rank's slowness in the replayed runs and confirmed it (docs/policy.md, "Early
    #: reports"). 0: any window confirms (the previous rule).
    early_confirm_span: float = 0.75
    #: ... and at least this many seconds (the policy's ``interval_s``; unknown: the span
    #: alone). At 3 s per report two early windows of 50 steps span 1.0 of an interval, 3.1 s,
    #: and fell inside a healthy rank's 3.5 s burst in the replayed runs (docs/policy.md,
    #: "Short report intervals"). At 5 s and longer 0.75 of an interval is longer. 0: the span
    #: alone (the previous rule).
    early_confirm_min_s: float = 3.5
    #: The evidence early windows finish is the latest full window's and the span they need
    #: an unbroken run of windows that added: a full window that adds nothing withdraws its
    #: word, a window that adds nothing starts the span anew. Without it, evidence left from
    #: windows long before (1 of the 6 needed, 20 s earlier) let a healthy rank's 3 s burst
    #: confirm it through early windows at 7.5 s and 10 s per report (docs/policy.md, "Early
    #: reports"). False: the previous rule.
    early_confirm_run: bool = True
    #: Full windows confirm a rank only once its evidence has lasted this many seconds (every
    #: window since it was last 0: full windows count the report interval, the policy's
    #: ``interval_s``, unknown: no minimum; chains an early window added to are left to
    #: ``early_confirm_span`` and ``early_finish_min_s``). A healthy rank of the recorded runs
    #: was 8-17 % slow, fast steps too, for 6 s at a time: at 3 s per report two windows, which
    #: confirmed it (3 in 2,368 clean replayed reports; 0 with it). Two 5 s windows span 10 s
    #: (docs/policy.md, "Short report intervals"). 0: no minimum.
    min_slow_s: float = 6.5
    #: ... or this many full windows, whichever is less: at intervals under ``min_slow_s / 3``
    #: (2.2 s) three windows suffice, so that a persistent straggler is still confirmed within
    #: three reports (at 0.5 s per report ``min_slow_s`` alone asked for 13).
    min_slow_windows: float = 3.0
    #: Early windows finish a full window's evidence only once the windows since the latest
    #: full window that added nothing (or the evidence was 0; full windows counted whole, early
    #: ones by their steps) have lasted this many seconds, or ``min_slow_windows`` intervals,
    #: whichever is less: 6.5 s, as ``min_slow_s``, one minimum for every chain a full window
    #: began. At 3 s per report a full window and one or two early ones (4.4-6.1 s of the
    #: recorded runs) fell inside healthy ranks' bursts in the replayed runs; with 5 s the
    #: 6.1 s one was confirmed (1 in 2,149 clean reports; 5 s mid-run 10 % within 1.5
    #: intervals 0.46 -> 0.45 with 6.5; docs/policy.md, "Short report intervals"). 0: none.
    early_finish_min_s: float = 6.5
    #: ... where the interval's windows hold fewer steps than this (the full windows' learned
    #: steps): longer windows carry more evidence each. Live at 3 s (470-1,260 steps per
    #: window) the minimum put a 10 % straggler's verdict from the third report (3.7-4.7 s) to
    #: the sixth (7.3-8.5 s); the replayed runs' windows hold 26-290 steps. 0: everywhere.
    early_finish_steps: float = 300.0
    #: Which windows are early reports': False: as the report says (the detector's cadence,
    #: `StragglerPolicy.update`'s ``early``), read from the window's steps only when it does not
    #: say; True: always read from the steps (the previous rule). Read from the steps, the 50-step
    #: early windows of a 3 s interval looked full where the run's first windows were short.
    early_from_steps: bool = False
    #: Smallest noise (log ratio) a report is judged with, whatever its steps.
    noise_floor: float = 0.005
    #: The collective waits as evidence (the ``"culprit"`` metric): a report where a rank is a
    #: culprit (`straggler.analysis.waits`) with this share of the job's time lost to it adds
    #: as much evidence as a report at ``evidence_z_cap`` (a smaller share, proportionally
    #: less; docs/policy.md); 0 turns the culprit evidence off.
    culprit_full_share: float = 0.2
    #: A culprit report of a window of ``n`` steps adds at most ``evidence_z_cap * sqrt(n /
    #: culprit_full_steps)`` (0: no cap): who waited for whom in a few dozen steps of a loaded
    #: host is no clear evidence (a clean demo run confirmed a healthy rank from two reports of
    #: 29-35 steps; docs/policy.md).
    culprit_full_steps: float = 150.0
    #: Rule ``"k_of_n"``: a rank is confirmed after ``k`` slow reports among its last ``n``.
    k: int = 4
    n: int = 5
    #: Scores at or above this count as healthy for clearing (hysteresis: above ``threshold``).
    clear_threshold: float = 0.97
    #: Consecutive healthy reports needed to clear a confirmed rank.
    clear_reports: int = 2
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
        check_number("tail_min_effect", self.tail_min_effect, 0.0, 10.0)
        check_fraction("min_section_share", self.min_section_share, allow_zero=True)
        check_bool("tail_slow_only", self.tail_slow_only)
        check_number("tail_full_steps", self.tail_full_steps, 0.0)
        check_choice("reference", self.reference, REFERENCES)
        check_choice("rule", self.rule, RULES)
        check_number("slow_z", self.slow_z, 0.0)
        check_number("evidence_z_cap", self.evidence_z_cap, 0.0, low_open=True)
        check_number("evidence_drift", self.evidence_drift, 0.0)
        check_number("evidence_threshold", self.evidence_threshold, 0.0, low_open=True)
        check_number("noise_floor", self.noise_floor, 0.0, 1.0)
        check_number("culprit_full_share", self.culprit_full_share, 0.0, 1.0)
        check_number("culprit_full_steps", self.culprit_full_steps, 0.0)
        check_number("window_noise_factor", self.window_noise_factor, 0.0, 100.0)
        check_number("report_noise_weight", self.report_noise_weight, 0.0, 10.0)
        check_number("own_noise_weight", self.own_noise_weight, 0.0, 10.0)
        check_bool("fast_steps", self.fast_steps)
        check_bool("recent_steps", self.recent_steps)
        check_bool("confirm_slow_only", self.confirm_slow_only)
        check_number("early_confirm_span", self.early_confirm_span, 0.0, 100.0)
        check_bool("early_confirm_run", self.early_confirm_run)
        check_bool("early_from_steps", self.early_from_steps)
        check_bool("tail_full_window", self.tail_full_window)
        check_number("min_slow_s", self.min_slow_s, 0.0, unit="seconds")
        check_number("min_slow_windows", self.min_slow_windows, 0.0)
        check_number("early_confirm_min_s", self.early_confirm_min_s, 0.0, unit="seconds")
        check_number("early_finish_min_s", self.early_finish_min_s, 0.0, unit="seconds")
        check_number("early_finish_steps", self.early_finish_steps, 0.0)
        check_number("recent_evidence_weight", self.recent_evidence_weight, 0.0, 1.0)
        check_number("fast_window_noise_factor", self.fast_window_noise_factor, 0.0, 100.0)
        check_number("fast_report_noise_weight", self.fast_report_noise_weight, 0.0, 10.0)
        check_number("spread_min_steps", self.spread_min_steps, 0.0)
        check_number("evidence_full_steps", self.evidence_full_steps, 0.0)
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
        check_choice("individual", self.individual, INDIVIDUAL_MODES)
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

    @classmethod
    def _from_shorthand(cls, value: Any, name: str,
                        environ: Mapping[str, str] | None) -> dict[str, Any] | None:
        """True: the defaults; None and False: off."""
        if value is True:
            return {}
        return None if value is None or value is False else NOT_A_SHORTHAND

