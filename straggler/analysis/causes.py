"""A cause for every flagged straggler: a label from `Cause` and the evidence behind it.

`diagnose` is pure: it reads a `Report` (scores, per-rank telemetry from
`straggler.telemetry.window`, optional probe results) and returns `{rank: Diagnosis}` for the
flagged ranks. Each label and
its rule are documented on `Cause` and in docs/telemetry.md. The rules compare a rank with its
healthy peers of the same report wherever they can, so a condition every GPU shares (all GPUs
at their power cap under a heavy load, a warm machine room) is never blamed on one rank; the
scores too are judged against the peers' (`_against_peers`), and a section too short to matter
on a rank (`CauseRules.min_section_share`) neither flags it nor drives its cause.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

from .._checks import check_fraction
from .._constants import DATA_LOADING_SECTION
from .own_time import SlowBetween, confirmed_between
from .policy_config import MIN_SECTION_SHARE
from .telemetry_table import PeerMedians, TelemetryTable
from .waits import WaitsTable

__all__ = ["Cause", "CauseRules", "Diagnosis", "diagnose", "flagged_ranks", "format_causes"]


class Cause(str, enum.Enum):
    """Why a rank is slow. The value is the stable label written to logs and JSON."""

    GPU_THERMAL_THROTTLING = "gpu_thermal_throttling"
    """Clocks cut for temperature: SW/HW thermal slowdown reasons or thermal violation time."""
    GPU_POWER_CAPPING = "gpu_power_capping"
    """Clocks cut for power: SW power cap / HW power brake reasons or power violation time."""
    GPU_HW_SLOWDOWN = "gpu_hw_slowdown"
    """HW slowdown (clocks cut by 2x or more: temperature, power brake or power supply) alone."""
    GPU_CLOCKS_LOW = "gpu_clocks_low"
    """SM clock well below its peers (or its maximum) with no thermal or power reason reported."""
    PCIE_LINK_DEGRADED = "pcie_link_degraded"
    """PCIe link running below its maximum generation or width, and below its peers."""
    GPU_SLOW_PROBE_CONFIRMED = "gpu_slow_probe_confirmed"
    """The health probe (fixed work, independent of the job) ran slower than on the peers."""
    GPU_SLOW_HEALTHY_TELEMETRY = "gpu_slow_healthy_telemetry"
    """GPU timers slow, telemetry healthy: suspect the hardware, run `Detector.run_probe()`."""
    MORE_WORK = "more_work"
    """GPU timers slow but the probe shows a GPU as fast as its peers: the rank has more work."""
    HOST_SIDE = "host_side"
    """Section (host) time slow while the rank's GPU timers are normal: CPU, data, Python."""
    LATE_OUTSIDE_COMPUTE = "late_outside_compute"
    """The job waits for this rank at its collectives (`Report.culprits`) while its compute
    (GPU timers, sections) is as fast as its peers': the time goes outside the measured compute
    (data loading, Python between sections, a host pause)."""
    WAITING_FOR_PEERS = "waiting_for_peers"
    """Slow scores explained by waiting at collectives for a culprit: a victim, not a cause."""
    UNKNOWN = "unknown"
    """Not enough evidence for any rule above (e.g. no GPU timers and no telemetry)."""


@dataclass(frozen=True)
class CauseRules:
    """Thresholds of the rules; the defaults are documented in docs/telemetry.md."""

    slow_score: float = 0.9
    """A GPU or section score below this is "slow" for a flagged rank; at or above, "normal"."""
    throttle_share: float = 0.10
    """Share of the window a throttle reason must cover to count as evidence ..."""
    throttle_margin: float = 0.10
    """... and by how much it must exceed the healthy peers' median share."""
    clock_ratio: float = 0.90
    """Mean SM clock below this times the reference (peers' median, else the maximum) is low."""
    idle_share: float = 0.5
    """Windows idle more often than this are not judged on clocks (idle GPUs clock down)."""
    probe_slow: float = 0.90
    """Probe throughput relative to the other ranks below this: the GPU itself is slow."""
    probe_ok: float = 0.95
    """Probe throughput relative to the other ranks at or above this: as fast as its peers."""
    host_ratio: float = 0.75
    """A slow section scoring below this times the rank's GPU score is a host-side slowdown even
    when the GPU score is below ``slow_score`` too: the host lost far more than the GPU (ranks
    time-slicing one GPU dip each other's GPU scores while one of them stalls on its host)."""
    min_section_share: float = MIN_SECTION_SHARE
    """A section whose median time on a rank (``Report.section_medians_ms``) is below this share
    of that rank's longest section median is negligible there: its scores neither flag the rank
    nor drive its cause (a section of microseconds on the host dips with scheduler noise and
    machine load, whatever the rank's real speed). Judged on the rank's own time, so a section
    that a slowdown makes long enough to matter counts again."""

    def __post_init__(self) -> None:
        for name in ("slow_score", "throttle_share", "clock_ratio", "idle_share", "probe_slow",
                     "probe_ok", "host_ratio"):
            check_fraction(name, getattr(self, name))
        check_fraction("throttle_margin", self.throttle_margin, allow_zero=True)
        check_fraction("min_section_share", self.min_section_share, allow_zero=True)


@dataclass(frozen=True)
class Diagnosis:
    """The cause of one flagged rank, with the evidence a human can check."""

    rank: int
    cause: Cause
    evidence: str
    """One sentence with the numbers the rule used."""
    values: Mapping[str, float] = field(default_factory=dict)
    """The scores, telemetry and probe values behind the label."""
    gpu: Any = None
    """The rank's `straggler.telemetry.nvml.GpuIdentity`, when known."""

    def __str__(self) -> str:
        return f"{self.cause.value}: {self.evidence}"

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON logs: the label as its string, non-finite values as None."""
        gpu = self.gpu
        if dataclasses.is_dataclass(gpu) and not isinstance(gpu, type):
            gpu = dataclasses.asdict(gpu)
        return {"rank": self.rank, "cause": self.cause.value, "evidence": self.evidence,
                "values": {k: (float(v) if _finite(v) else None) for k, v in self.values.items()},
                "gpu": gpu}


def flagged_ranks(report: Any, threshold: float = 0.75,
                  min_section_share: float = CauseRules.min_section_share) -> set[int]:
    """Ranks `Report.identify_stragglers` flags at ``threshold`` (a section only where it is not
    negligible, see `CauseRules.min_section_share`), plus the policy's confirmed."""
    found = report.identify_stragglers(threshold, threshold, threshold, threshold)
    ranks = {s.rank for key in ("straggler_gpus_relative", "straggler_gpus_individual")
             for s in found[key]}
    for key in ("straggler_sections_relative", "straggler_sections_individual"):
        for name, ids in found[key].items():
            ranks |= {s.rank for s in ids
                      if not _negligible(report, name, s.rank, min_section_share)}
    ranks |= {s.rank for s in getattr(report, "confirmed", ())}
    return ranks


def diagnose(report: Any, probe: Mapping[int, float] | None = None,
             rules: CauseRules = CauseRules(), flagged: Iterable[int] | None = None,
             threshold: float = 0.75,
             no_gpu_timers: Mapping[int, str | None] | None = None) -> dict[int, Diagnosis]:
    """A `Diagnosis` for every flagged rank of ``report`` (see `flagged_ranks`).

    ``probe``: rank -> probe throughput relative to the other ranks (`Detector.run_probe`).
    ``flagged``: the ranks to diagnose instead of `flagged_ranks(report, threshold)`.
    ``no_gpu_timers``: rank -> why that rank has no GPU timers (e.g. "no usable CUDA device:
    ..."), quoted by the evidence when it matters; a rank not in it gets the possible reasons.
    """
    ranks = set(flagged) if flagged is not None \
        else flagged_ranks(report, threshold, rules.min_section_share)
    culprits = {c.rank: c for c in getattr(report, "culprits", ()) or ()}
    ranks |= set(culprits)
    between = {s.rank: s for s in confirmed_between(report)}  # own time: analysis/own_time.py
    ranks |= set(between)
    # The individual scores a flagged rank's are judged against: the unflagged ranks' median,
    # else (every rank flagged: a job-wide dip) every rank's.
    everyone = set(getattr(report, "rank_to_node", {}) or {})
    levels = _peer_levels(report, (everyone - ranks) or everyone)
    telemetry = TelemetryTable.of(getattr(report, "rank_telemetry", {}) or {})
    healthy = telemetry.peer_medians(exclude=ranks)  # the same peers for every flagged rank
    healthy_wait = _median_wait(getattr(report, "waits", {}) or {}, exclude=ranks)
    gpus: Mapping[int, Any] = getattr(report, "gpus", {}) or {}
    out = {}
    for rank in sorted(ranks):
        peers = healthy if healthy.ranks else telemetry.peer_medians(exclude=(rank,))
        scores = _scores(report, rank, rules, levels)
        found = _waits_rule(report, rank, culprits, rules, scores, between, healthy_wait)
        if found is None:
            found = _diagnose_rank(report, rank, telemetry.get(rank, {}), peers,
                                   (probe or {}).get(rank), rules, scores,
                                   (no_gpu_timers or {}).get(rank))
        cause, evidence, values = found
        out[rank] = Diagnosis(rank, cause, evidence, values, gpus.get(rank))
    return out


def _median_wait(waits: Mapping[int, Any], exclude: set[int]) -> float:
    """The median time the ranks not in ``exclude`` waited at collectives (0 without any); from
    a `WaitsTable`'s column, without a `RankWaits` per rank."""
    if isinstance(waits, WaitsTable):
        values = waits.waited_s[~np.isin(waits.ranks, list(exclude))]
    else:
        values = np.array([w.waited_s for r, w in waits.items() if r not in exclude])
    return float(np.median(values)) if values.size else 0.0


def _waits_rule(report: Any, rank: int, culprits: Mapping[int, Any], rules: CauseRules,
                scores: tuple[float, float, str],
                between_ranks: Mapping[int, SlowBetween] | None = None,
                healthy_wait: float = 0.0) -> tuple[Cause, str, dict[str, float]] | None:
    """The collective-waits evidence (docs/culprits.md), or None to use the other rules.

    A culprit, or a rank confirmed on its own time between collectives (``between_ranks``),
    whose compute scores are normal (or absent) is late outside its compute; a flagged rank
    that is none of them but waited at collectives at least twice as long as it made others
    wait, and at least twice as long as the median unflagged rank (``healthy_wait``), in a
    report with such ranks, is slow because it waited for them. A flagged rank that waited no
    longer than healthy ranks did is not slowed by its waits (a slow compute section beside a
    peer late once on a loaded host: the demo's rank 2).
    """
    between_ranks = between_ranks or {}
    between = between_ranks.get(rank)
    gpu_score, sec_score, sec_name = scores
    compute_slow = any(_finite(x) and x < rules.slow_score for x in (gpu_score, sec_score))
    values: dict[str, float] = {"gpu_score": gpu_score, "section_score": sec_score}
    waits = (getattr(report, "waits", {}) or {}).get(rank)
    culprit = culprits.get(rank)
    if culprit is not None:
        if compute_slow:
            return None  # its compute explains it: the other rules say why
        groups = "; ".join(f"{g.label} ({g.late_share:.0%} last)" for g in culprit.groups[:3])
        values.update({"time_lost_s": culprit.time_lost_s, "share": culprit.share})
        return (Cause.LATE_OUTSIDE_COMPUTE,
                f"its peers lost {culprit.time_lost_s:.3g} s ({culprit.share:.1%} of the job's "
                f"time) waiting for it at collectives in {groups}, while its compute scores are "
                f"normal (GPU {_fmt(gpu_score)}, sections {_fmt(sec_score)}): the time goes "
                "outside the measured compute (data loading, Python between sections, a host "
                "pause)", values)
    if between is not None:
        if compute_slow:
            return None  # its compute explains it: the other rules say why
        values.update({"time_lost_s": between.lost_s, "share": between.share,
                       "own_ms": between.own_ms, "peers_own_ms": between.peers_ms})
        share = f" ({between.share:.1%} of the job's time)" if _finite(between.share) else ""
        return (Cause.LATE_OUTSIDE_COMPUTE,
                f"it spends {between.excess:.0%} more time of its own between collectives than "
                f"its peers ({between.own_ms:.3g} ms a step against {between.peers_ms:.3g} ms; "
                f"the others wait about {between.lost_s:.3g} s{share} for it), while its compute "
                f"scores are normal (GPU {_fmt(gpu_score)}, sections {_fmt(sec_score)}): the "
                "time goes outside the measured compute (data loading, Python between "
                "sections, a host pause)", values)
    waited_for = sorted(set(culprits) | set(between_ranks))
    if waited_for and waits is not None and waits.waited_s > 0 \
            and waits.waited_s >= 2 * max(waits.time_lost_s, healthy_wait):
        names = ", ".join(str(r) for r in waited_for[:5])
        values.update({"waited_s": waits.waited_s})
        return (Cause.WAITING_FOR_PEERS,
                f"it waited {waits.waited_s:.3g} s at collectives for rank(s) {names}; its slow "
                f"scores ({sec_name or 'GPU'}) include those waits: a victim, not a cause",
                values)
    return None


def _fmt(x: float) -> str:
    return f"{x:.2f}" if _finite(x) else "-"


# -- the rules -------------------------------------------------------------------------------------
def _finite(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _num(t: Mapping[str, Any], key: str) -> float:
    """``t[key]`` as a float; NaN when it is absent or not a finite number."""
    value = t.get(key)
    return float(value) if _finite(value) else math.nan


def _negligible(report: Any, name: str, rank: int, share: float) -> bool:
    """Whether section ``name`` takes less than ``share`` of ``rank``'s longest section median
    (False when the report has no medians for the rank: nothing to tell it by)."""
    medians: Mapping[str, Mapping[int, float]] = getattr(report, "section_medians_ms", {}) or {}
    own = medians.get(name, {}).get(rank)
    longest = max((m for by_rank in medians.values() if _finite(m := by_rank.get(rank))),
                  default=math.nan)
    return _finite(own) and _finite(longest) and own < share * longest


_GPU_KINDS = ("gpu_relative_perf_scores", "gpu_individual_perf_scores")
_SECTION_KINDS = ("section_relative_perf_scores", "section_individual_perf_scores")


def _peer_levels(report: Any, peers: Iterable[int]) -> dict[tuple[str, str], float]:
    """(individual score field, section name or "") -> the median score of ``peers`` (NaN
    without any). Relative scores need none: they compare the ranks already."""
    peers = list(peers)

    def median(by_rank: Mapping[int, float]) -> float:
        values = [x for p in peers if _finite(x := by_rank.get(p))]
        return float(np.median(values)) if values else math.nan

    levels = {("gpu_individual_perf_scores", ""): median(report.gpu_individual_perf_scores)}
    return levels | {("section_individual_perf_scores", name): median(by_rank)
                     for name, by_rank in report.section_individual_perf_scores.items()}


def _against_peers(score: Any, level: float) -> float:
    """``score`` over its peers' median ``level`` of the same score when that is below 1 (at
    most 1): a dip every rank shares (individual scores in a loaded report) is no one rank's."""
    if not _finite(score):
        return math.nan
    return min(1.0, score / level) if _finite(level) and 0 < level < 1 else float(score)


def _scores(report: Any, rank: int, rules: CauseRules = CauseRules(),
            levels: Mapping[tuple[str, str], float] | None = None) -> tuple[float, float, str]:
    """(lowest GPU score, lowest section score, that section's name), individual scores against
    the peers' ``levels`` (`_peer_levels`), negligible sections left out (`_negligible`); NaN
    when absent."""
    levels = levels or {}
    gpu = [_against_peers(getattr(report, kind).get(rank), levels.get((kind, ""), math.nan))
           for kind in _GPU_KINDS]
    gpu = [g for g in gpu if _finite(g)]
    worst_sec, worst_name = math.nan, ""
    for kind in _SECTION_KINDS:
        for name, by_rank in getattr(report, kind).items():
            if _negligible(report, name, rank, rules.min_section_share):
                continue
            s = _against_peers(by_rank.get(rank), levels.get((kind, name), math.nan))
            if _finite(s) and not (s >= worst_sec):
                worst_sec, worst_name = s, name
    return (min(gpu) if gpu else math.nan), worst_sec, worst_name


def _share(t: Mapping[str, float], *keys: str) -> float:
    vals = [t[k] for k in keys if _finite(t.get(k))]
    return max(vals) if vals else math.nan


def _diagnose_rank(report: Any, rank: int, t: Mapping[str, float],
                   peers: PeerMedians, probe: float | None,
                   rules: CauseRules, scores: tuple[float, float, str],
                   no_gpu_timers: str | None = None) -> tuple[Cause, str, dict[str, float]]:
    gpu_score, sec_score, sec_name = scores
    values: dict[str, float] = {"gpu_score": gpu_score, "section_score": sec_score}
    gpu_known = _finite(gpu_score)
    gpu_slow = gpu_known and gpu_score < rules.slow_score
    sec_slow = _finite(sec_score) and sec_score < rules.slow_score
    has_telemetry = _num(t, "nvml_samples") > 0

    # 1. PCIe link below its maximum and below the peers: slows copies whichever timer sees them.
    if has_telemetry:
        for what, unit in (("width", "x"), ("gen", "gen ")):
            mean, top = _num(t, f"pcie_{what}_mean"), _num(t, f"pcie_{what}_limit")
            if not (_finite(mean) and _finite(top) and mean < top):
                continue
            peer = peers(f"pcie_{what}_mean")
            if _finite(peer) and mean >= peer - 0.5:
                continue  # the peers' links are as narrow: the platform's normal
            values.update({f"pcie_{what}_mean": mean, f"pcie_{what}_limit": top,
                           f"peers_pcie_{what}_mean": peer})
            peers_txt = f", peers {unit}{peer:g}" if _finite(peer) else ""
            return (Cause.PCIE_LINK_DEGRADED,
                    f"PCIe link at {unit}{mean:g} of {unit}{top:g}{peers_txt}", values)

    # 2. Host side: the GPU timers are normal (or far less slow than the section), so the slow
    # section time is spent on the host. Before the GPU rules: a GPU score dipped by sharing the
    # GPU must not turn a host stall into "more work" or a suspect board.
    if gpu_known and sec_slow and (not gpu_slow or sec_score < rules.host_ratio * gpu_score):
        return (Cause.HOST_SIDE,
                f"section '{sec_name}' score {sec_score:.2f} while the GPU score is "
                f"{gpu_score:.2f}: time goes to CPU work, data loading, Python or I/O on this "
                "host", values)

    # 2b. The attach's data-loading section (host-timed around each DataLoader batch) slow while
    # the GPU is not: host time by what the section holds, GPU timers or not.
    if sec_slow and not gpu_slow and sec_name == DATA_LOADING_SECTION:
        return (Cause.HOST_SIDE,
                f"section '{sec_name}' score {sec_score:.2f}: loading its batches (the "
                "DataLoader's next batch, timed on the host) is slow on this rank: the input "
                "pipeline (dataloader workers, storage, CPU, the dataset's own code)", values)

    # 3. GPU-side evidence from NVML (GPU slow, or no GPU timers to tell).
    if has_telemetry and (gpu_slow or (not gpu_known and sec_slow)):
        candidates = []
        for cause, keys, what in (
                (Cause.GPU_THERMAL_THROTTLING,
                 ("reason_sw_thermal_frac", "reason_hw_thermal_frac", "thermal_violation_frac"),
                 "thermally throttled"),
                (Cause.GPU_POWER_CAPPING,
                 ("reason_sw_power_cap_frac", "reason_hw_power_brake_frac",
                  "power_violation_frac"), "power capped"),
                (Cause.GPU_HW_SLOWDOWN, ("reason_hw_slowdown_frac",), "in HW slowdown")):
            share = _share(t, *keys)
            peer_vals = [m for m in (peers(k) for k in keys) if _finite(m)]
            peer = max(peer_vals) if peer_vals else math.nan
            base = peer if _finite(peer) else 0.0
            if _finite(share) and share >= rules.throttle_share \
                    and share >= base + rules.throttle_margin:
                candidates.append((share - base, cause, share, peer, what))
        if candidates:
            _, cause, share, peer, what = max(candidates, key=lambda c: c[0])
            values.update({"throttled_share": share, "peers_throttled_share": peer})
            extra = _telemetry_brief(t)
            peers_txt = f" (peers {peer:.0%})" if _finite(peer) else ""
            return cause, f"{share:.0%} of the window {what}{peers_txt}; {extra}", values

        clock = _num(t, "sm_clock_mhz_mean")
        peer_clock = peers("sm_clock_mhz_mean")
        reference = peer_clock if _finite(peer_clock) else _num(t, "sm_clock_max_mhz")
        idle = _num(t, "reason_idle_frac")
        if _finite(clock) and _finite(reference) and clock < rules.clock_ratio * reference \
                and not (_finite(idle) and idle > rules.idle_share):
            values.update({"sm_clock_mhz_mean": clock, "reference_sm_clock_mhz": reference})
            others = [name for name in ("applications_clocks", "sync_boost", "display_clock")
                      if _num(t, f"reason_{name}_frac") > 0]
            why = ("reported reason: " + ", ".join(others)) if others else "no reason reported"
            ref_txt = "peers' median" if _finite(peer_clock) else "its maximum"
            return (Cause.GPU_CLOCKS_LOW,
                    f"SM clock {clock:.0f} MHz vs {reference:.0f} MHz ({ref_txt}), {why}",
                    values)

    # 4. GPU slow without telemetry evidence: the probe decides, else suspect the board.
    if gpu_slow:
        if probe is not None and _finite(probe):
            values["probe_relative"] = probe
            if probe < rules.probe_slow:
                return (Cause.GPU_SLOW_PROBE_CONFIRMED,
                        f"health probe at {probe:.2f} of the other GPUs' throughput with healthy "
                        "telemetry: the GPU itself is slow (drain and test the board)", values)
            if probe >= rules.probe_ok:
                return (Cause.MORE_WORK,
                        f"GPU score {gpu_score:.2f} but the health probe runs at {probe:.2f} "
                        "of the other GPUs': the GPU is fine, this rank does more work (data or "
                        "sequence imbalance, a different pipeline stage)", values)
        if has_telemetry:
            return (Cause.GPU_SLOW_HEALTHY_TELEMETRY,
                    f"GPU score {gpu_score:.2f} with healthy telemetry ({_telemetry_brief(t)}); "
                    "suspect the hardware: run Detector.run_probe()", values)
        return (Cause.UNKNOWN, f"GPU score {gpu_score:.2f}; no NVML telemetry from this rank",
                values)

    if sec_slow:
        return (Cause.UNKNOWN,
                f"section '{sec_name}' score {sec_score:.2f}; no GPU timers on this rank to tell "
                f"host from GPU time ({no_gpu_timers or _NO_GPU_TIMERS_UNKNOWN}) and no "
                "telemetry evidence", values)
    return (Cause.UNKNOWN, _too_mild(report, rank, gpu_score, sec_score, sec_name, rules),
            values)


def _too_mild(report: Any, rank: int, gpu_score: float, sec_score: float, sec_name: str,
              rules: CauseRules) -> str:
    """The evidence of a flagged rank none of whose scores is slow (a mild straggler the policy
    confirmed: 10 % slower scores about 0.91, above `slow_score`)."""
    lowest = [f"GPU {gpu_score:.2f}"] if _finite(gpu_score) else []
    if _finite(sec_score):
        lowest.append(f"section '{sec_name}' {sec_score:.2f}")
    scores = f" (lowest: {', '.join(lowest)})" if lowest else ""
    state = (getattr(report, "straggler_states", None) or {}).get(rank)
    reasons = getattr(state, "reasons", None) or {}
    if reasons:
        on = ", ".join(f"{metric} ({rule})" for metric, rule in sorted(reasons.items()))
        return (f"confirmed by the persistence policy on {on}, but no score of this report is "
                f"below slow_score={rules.slow_score:g}{scores}: too mild a slowdown for the "
                "cause rules (CauseRules.slow_score)")
    return (f"flagged, but no score of this report is below slow_score={rules.slow_score:g}"
            f"{scores}: the persistence policy confirmed it on earlier reports")


# What a rank without GPU timers may lack, when the diagnosing rank was not told which.
_NO_GPU_TIMERS_UNKNOWN = ("its sections ran with profile_cuda=False, or it has no usable CUDA "
                          "device: its log says which")


def _telemetry_brief(t: Mapping[str, float]) -> str:
    parts = []
    if _finite(t.get("sm_clock_mhz_mean")):
        top = _num(t, "sm_clock_max_mhz")
        parts.append(f"SM {t['sm_clock_mhz_mean']:.0f}" + (f"/{top:.0f}" if _finite(top) else "")
                     + " MHz")
    if _finite(t.get("gpu_temp_c_max")):
        parts.append(f"{t['gpu_temp_c_max']:.0f} C")
    if _finite(t.get("power_w_mean")):
        limit = _num(t, "power_limit_w")
        parts.append(f"{t['power_w_mean']:.0f}" + (f"/{limit:.0f}" if _finite(limit) else "")
                     + " W")
    if _num(t, "ecc_uncorrected_delta") > 0:
        parts.append(f"{t['ecc_uncorrected_delta']:.0f} uncorrected ECC errors")
    return ", ".join(parts) if parts else "no values"


def format_causes(report: Any) -> str:
    """One line per diagnosed rank: rank, node, GPU identity, label and evidence."""
    causes: Mapping[int, Diagnosis] = getattr(report, "causes", {}) or {}
    if not causes:
        return "no stragglers diagnosed"
    lines = []
    for rank in sorted(causes):
        d = causes[rank]
        node = report.rank_to_node.get(rank, "<unknown>")
        gpu = f", {d.gpu}" if d.gpu is not None and getattr(d.gpu, "known", True) else ""
        lines.append(f"rank {rank} ({node}{gpu}): {d.cause.value}: {d.evidence}")
    return "\n".join(lines)
