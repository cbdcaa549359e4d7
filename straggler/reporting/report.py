"""The cross-rank report: per-rank scores, how to read them, and a text table.

`Report` keeps NVRx's ten fields with their names and meaning, so code written against
``nvidia_resiliency_ext.straggler.Report`` works unchanged; fields added here all have defaults.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._checks import check_fraction as _check_threshold
from .._checks import check_int
from ..analysis.causes import format_causes as _format_causes
from ..analysis.own_time import OwnTime, confirmed_between
from ..analysis.statistics import Statistic
from ..analysis.telemetry_table import TelemetryTable
from ..analysis.waits import Culprit, RankWaits
from .decision import below as _below  # the one threshold rule

__all__ = ["Report", "StragglerId", "identify_stragglers"]

_UNKNOWN_NODE = "<unknown>"
_TABLE_TELEMETRY = ("sm_clock_mhz_mean", "gpu_temp_c_max", "power_w_mean")


@dataclass(frozen=True)
class StragglerId:
    """A flagged rank: its global rank and the node it runs on."""

    rank: int
    node: str


def identify_stragglers(report: Report, gpu_rel_threshold: float = 0.75,
                        section_rel_threshold: float = 0.75, gpu_indiv_threshold: float = 0.75,
                        section_indiv_threshold: float = 0.75) -> dict[str, Any]:
    """Ranks whose scores are strictly below the thresholds; see `Report.identify_stragglers`."""
    gpu_rel = _check_threshold("gpu_rel_threshold", gpu_rel_threshold)
    sec_rel = _check_threshold("section_rel_threshold", section_rel_threshold)
    gpu_ind = _check_threshold("gpu_indiv_threshold", gpu_indiv_threshold)
    sec_ind = _check_threshold("section_indiv_threshold", section_indiv_threshold)

    def ids(ranks: set[int]) -> set[StragglerId]:
        return {StragglerId(r, report.rank_to_node.get(r, _UNKNOWN_NODE)) for r in ranks}

    def per_section(scores: Mapping[str, Mapping[int, float]], threshold: float):
        flagged = {name: ids(_below(by_rank, threshold)) for name, by_rank in scores.items()}
        return {name: found for name, found in flagged.items() if found}

    return {
        "straggler_gpus_relative": ids(_below(report.gpu_relative_perf_scores, gpu_rel)),
        "straggler_gpus_individual": ids(_below(report.gpu_individual_perf_scores, gpu_ind)),
        "straggler_sections_relative": per_section(report.section_relative_perf_scores, sec_rel),
        "straggler_sections_individual": per_section(report.section_individual_perf_scores,
                                                     sec_ind),
    }


@dataclass(frozen=True)
class Report:
    """Scores of one report interval.

    Scores are ``reference / own median``: 1.0 is as fast as the reference, 0.5 twice as slow.
    Relative scores compare a rank with the other ranks of the group (reference: the smallest
    median); individual scores compare a rank with its own past (reference: its best median so
    far). NVRx's score fields keep NVRx's arithmetic (docs/nvrx.md lists the few exceptions);
    our robust scores are in the ``robust_*`` fields. GPU scores combine the rank's GPU timers
    (communication excluded) weighted by the time spent in each; section scores use host wall time
    of the ``detection_section`` blocks. Scores are keyed by **global** rank; NaN means "no
    score" (the rank lacks the timer, or nobody else has it) and is never flagged. See
    docs/scores.md for the formulas.

    With ``gather_on_rank0=True`` the group's first rank gets every rank's scores and the other
    ranks get no report (``None``); with ``False`` every rank gets a report with only its own rank
    in the score dicts and in ``rank_to_node``. Score dicts are empty for a score kind that was not
    requested.

    Fields kept from NVRx: the eight score/summary mappings, ``generate_report_elapsed_time``
    (ms), ``gather_on_rank0`` and ``rank`` (this process's global rank). Unlike NVRx, whose kernel
    summaries are in microseconds, ``local_kernel_summaries`` holds our GPU timers in
    **milliseconds**, like ``local_section_summaries``. Added fields:

    - ``section_medians_ms``: section -> global rank -> that rank's median section time (ms);
      sections absent on a rank are left out.
    - ``section_quartiles_ms``: section -> global rank -> (lower, upper) quartile of that rank's
      section times in the window (ms): the within-window spread the policy weighs each median
      by (docs/policy.md).
    - ``section_low_ms``: section -> global rank -> the 5th percentile of that rank's section
      times in the window (ms): its fast steps, which the policy's evidence reads (interference
      lengthens some steps, a straggler every step; docs/policy.md).
    - ``section_recent_ms``: section -> global rank -> (median, 5th percentile) of that rank's
      section times in the last quarter of the window (ms,
      `straggler.analysis.recent`): a straggler that starts inside the window shows there first.
    - ``rank_telemetry``: global rank -> telemetry field -> value, absent (NaN) values dropped.
    - ``group_ranks``: the global ranks of the group the report covers, in group order.
    - ``confirmed``: the ranks the persistence policy (`straggler.analysis.policy`) has confirmed as
      stragglers after this report, over several reports; empty without a policy. Unlike
      `identify_stragglers` (one report, NVRx's rule) it is robust to noise and structure.
    - ``suspects``: the ranks that look slow after this report but are not confirmed yet (the
      policy counted a recent report as slow for them): the next report can come early to
      confirm or clear them. Empty without a policy; never overlaps ``confirmed``.
    - ``straggler_states``: global rank -> `straggler.analysis.policy.RankState` for the ranks the
      policy is watching (slow in a recent report, or confirmed).
    - ``gpus``: global rank -> `straggler.telemetry.nvml.GpuIdentity` (name, UUID, serial, PCI bus
      id, driver version): the physical GPU to pull. Empty without NVML telemetry.
    - ``causes``: global rank -> `straggler.analysis.causes.Diagnosis` (a `Cause` label and its
      evidence) for every flagged rank; see `format_causes` and docs/telemetry.md.
    - ``robust_gpu_relative_scores``, ``robust_section_relative_scores``: relative scores
      against the generator's ``relative_reference`` (``"median"``: the median rank; with the
      default ``"min"`` the same numbers as NVRx's fields).
    - ``robust_gpu_individual_scores``, ``robust_section_individual_scores``: individual
      scores against the best median of the last ``individual_window`` reports that
      ``individual_support`` of them reached, so one fast report (a warm-up) is never the
      reference and a fast outlier leaves the window (docs/scores.md).
    - ``waits``: global rank -> `straggler.analysis.waits.RankWaits`: its collectives in the
      window, the time it waited for others, the time its peers lost waiting for it, how often it
      arrived last. Empty without collective observation or without gathering.
    - ``culprits``: the ranks the job waits for (`straggler.analysis.waits.Culprit`: time lost,
      share of the job's time, the groups where it made the others wait), most costly first;
      `culprit_ranks` is their set. See docs/culprits.md.
    - ``own_time``: global rank -> `straggler.analysis.own_time.OwnTime`: its own time per step
      (the time it spent outside its collectives: median, quartiles, fast steps, recent part),
      which the policy judges against its peers' (metric ``"between_collectives"``): a rank slow
      outside every section. Empty without collective observation or without gathering.
    - ``waits_window_s``: the length of the waits' window (s; NaN without waits).
    """

    gpu_relative_perf_scores: Mapping[int, float]
    section_relative_perf_scores: Mapping[str, Mapping[int, float]]
    gpu_individual_perf_scores: Mapping[int, float]
    section_individual_perf_scores: Mapping[str, Mapping[int, float]]
    rank_to_node: Mapping[int, str]
    local_section_summaries: Mapping[str, Mapping[Statistic, float]]
    local_kernel_summaries: Mapping[str, Mapping[Statistic, float]]
    generate_report_elapsed_time: float
    gather_on_rank0: bool
    rank: int | None
    section_medians_ms: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    section_quartiles_ms: Mapping[str, Mapping[int, tuple[float, float]]] = field(
        default_factory=dict)
    section_low_ms: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    section_recent_ms: Mapping[str, Mapping[int, tuple[float, float]]] = field(
        default_factory=dict)
    rank_telemetry: Mapping[int, Mapping[str, float]] = field(default_factory=dict)
    group_ranks: tuple[int, ...] = ()
    confirmed: frozenset[StragglerId] = frozenset()
    suspects: frozenset[StragglerId] = frozenset()
    straggler_states: Mapping[int, Any] = field(default_factory=dict)
    gpus: Mapping[int, Any] = field(default_factory=dict)
    causes: Mapping[int, Any] = field(default_factory=dict)
    robust_gpu_relative_scores: Mapping[int, float] = field(default_factory=dict)
    robust_section_relative_scores: Mapping[str, Mapping[int, float]] = field(
        default_factory=dict)
    robust_gpu_individual_scores: Mapping[int, float] = field(default_factory=dict)
    robust_section_individual_scores: Mapping[str, Mapping[int, float]] = field(
        default_factory=dict)
    waits: Mapping[int, RankWaits] = field(default_factory=dict)
    culprits: tuple[Culprit, ...] = ()
    own_time: Mapping[int, OwnTime] = field(default_factory=dict)
    waits_window_s: float = math.nan

    @property
    def culprit_ranks(self) -> frozenset[int]:
        """The global ranks the job waits for (``culprits``), for the verdict policy."""
        return frozenset(c.rank for c in self.culprits)

    def identify_stragglers(self, gpu_rel_threshold: float = 0.75,
                            section_rel_threshold: float = 0.75,
                            gpu_indiv_threshold: float = 0.75,
                            section_indiv_threshold: float = 0.75) -> dict[str, Any]:
        """Ranks with a score strictly below its threshold, as `StragglerId` sets.

        Returns NVRx's four keys: ``straggler_gpus_relative`` and ``straggler_gpus_individual``
        (sets), ``straggler_sections_relative`` and ``straggler_sections_individual`` (section ->
        set, only sections with at least one straggler). NaN scores are never flagged. Every
        threshold must be in (0, 1]; otherwise ``ValueError`` names it.
        """
        return identify_stragglers(self, gpu_rel_threshold, section_rel_threshold,
                                   gpu_indiv_threshold, section_indiv_threshold)

    def format_table(self, threshold: float = 0.75, max_name_len: int = 28,
                     max_rows: int | None = None) -> str:
        """A fixed-width text table, one row per rank: node, GPU and section scores.

        Scores below ``threshold`` carry a ``*``; a missing score shows as ``-``. Section names
        longer than ``max_name_len`` (an integer >= 2) are shortened from the left (the end of
        ``file:line`` names is the telling part).
        With ``max_rows``, only that many ranks are listed: those with the lowest scores.
        """
        threshold = _check_threshold("threshold", threshold)
        check_int("max_name_len", max_name_len, low=2)  # the ellipsis and one character
        if max_rows is not None:
            check_int("max_rows", max_rows)
        # header, rank -> value, kind (_cell: a score, seconds or another value)
        columns: list[tuple[str, Mapping[int, float], str]] = []
        if self.gpu_relative_perf_scores:
            columns.append(("gpu rel", self.gpu_relative_perf_scores, "score"))
        if self.gpu_individual_perf_scores:
            columns.append(("gpu ind", self.gpu_individual_perf_scores, "score"))
        sections = sorted(set(self.section_relative_perf_scores)
                          | set(self.section_individual_perf_scores))
        for name in sections:
            short = name if len(name) <= max_name_len else "…" + name[-(max_name_len - 1):]
            if name in self.section_relative_perf_scores:
                columns.append((f"{short} rel", self.section_relative_perf_scores[name], "score"))
            if name in self.section_individual_perf_scores:
                columns.append((f"{short} ind", self.section_individual_perf_scores[name],
                                "score"))
        telemetry = TelemetryTable.of(self.rank_telemetry)
        fields = telemetry.present_fields()
        # NVML telemetry has ~50 fields: the table shows the telling few (all are in the report).
        fields = [f for f in _TABLE_TELEMETRY if f in fields] or fields
        for name in fields:
            columns.append((name, telemetry.by_rank(name), "value"))
        if self.culprits:  # who the job waits for at its collectives (docs/culprits.md)
            columns.append(("lost s", {r: w.time_lost_s for r, w in self.waits.items()
                                       if w.time_lost_s > 0}, "seconds"))
            columns.append(("waited s", {r: w.waited_s for r, w in self.waits.items()},
                            "seconds"))
        if self.causes:  # the label of each diagnosed rank; format_causes() has the evidence
            columns.append(("cause", {r: d.cause.value for r, d in self.causes.items()}, "value"))

        ranks = sorted(set(self.rank_to_node).union(*(c[1] for c in columns))
                       if columns else self.rank_to_node)
        shown = ranks
        if max_rows is not None and len(ranks) > max_rows:
            def lowest(rank: int) -> float:
                scores = [v.get(rank, math.nan) for _, v, kind in columns if kind == "score"]
                return min((x for x in scores if not math.isnan(x)), default=math.inf)  # NaN last
            shown = sorted(sorted(ranks, key=lowest)[:max_rows])
        header = ["rank", "node"] + [c[0] for c in columns]
        rows = [[str(r), self.rank_to_node.get(r, _UNKNOWN_NODE)]
                + [_cell(values.get(r, math.nan), kind, threshold) for _, values, kind in columns]
                for r in shown]
        widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]

        def fmt(line: list[str]) -> str:
            cells = [line[0].rjust(widths[0]), line[1].ljust(widths[1])]
            cells += [cell.rjust(width) for cell, width in zip(line[2:], widths[2:], strict=True)]
            return "  ".join(cells).rstrip()

        title = (f"straggler report: {len(ranks)} rank(s), "
                 f"{self.generate_report_elapsed_time:.1f} ms scoring and exchange"
                 f"{'' if columns else ', no scores'}")
        lines = [title, fmt(header), *(fmt(row) for row in rows)]
        if len(shown) < len(ranks):
            lines.append(f"... {len(ranks) - len(shown)} more rank(s) with higher scores")
        culprits = self.format_culprits()
        if self.culprits:
            lines.append(culprits)
        lines.extend(s.describe(self.rank_to_node.get(s.rank, _UNKNOWN_NODE))
                     for s in confirmed_between(self))
        return "\n".join(lines)

    def format_culprits(self) -> str:
        """One line per culprit: "the job waited X s (Y %) for rank R", with its groups."""
        return format_culprits(self.culprits, self.rank_to_node)

    def format_causes(self) -> str:
        """One line per diagnosed rank: node, GPU identity, cause label and its evidence."""
        return _format_causes(self)


def format_culprits(culprits: Any, rank_to_node: Mapping[int, str]) -> str:
    """The lines of `Report.format_culprits` (also for reports read back from a log)."""
    if not culprits:
        return "no rank made the others wait"
    lines = []
    for c in culprits:
        groups = "; ".join(f"{g.label}: {g.time_lost_s:.3g} s, last in {g.late_share:.0%}"
                           for g in c.groups[:4])
        more = f"; {len(c.groups) - 4} more group(s)" if len(c.groups) > 4 else ""
        share = f" ({c.share:.1%})" if math.isfinite(c.share) else ""
        lines.append(f"the job waited {c.time_lost_s:.3g} s{share} for rank {c.rank} "
                     f"({rank_to_node.get(c.rank, _UNKNOWN_NODE)}) at collectives: "
                     f"{groups}{more}")
    return "\n".join(lines)


def _cell(value: Any, kind: str, threshold: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, str):
        return value
    if kind == "score":
        return f"{value:.3f}" + ("*" if value < threshold else " ")
    if kind == "seconds":  # one column of times reads best at one precision (ms)
        return f"{value:.3f}"
    return f"{value:.4g}"
