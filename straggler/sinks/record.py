"""One report as plain JSON data: the record of the report log (schema in docs/reportlog.md).

`report_record` is pure: a `Report` plus what the detector knows about the report (iteration,
window, its own cost) in, a dict of lists, numbers, strings and None out. Per-rank values are
lists aligned with ``ranks`` (compact at 16k ranks); NaN and infinities become None, which
JSON can carry. Telemetry is summarised over ranks (min / median / max per field) and given in
full only for the flagged and confirmed ranks, so a line stays small on large jobs.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _env
from ..analysis.own_time import OwnTimeTable, confirmed_between
from ..analysis.telemetry_table import TelemetryTable
from ..analysis.waits import WaitsTable

__all__ = ["ENV_RUN_ID", "READ_VERSIONS", "SCHEMA", "SCHEMA_VERSION", "ReportContext",
           "default_run_id", "report_record", "restart_count"]

SCHEMA = "straggler.report"
SCHEMA_VERSION = 4
"""Version 2 adds ``run_id``, 3 ``waits`` and ``culprits``, 4 ``own_time`` and
``slow_between`` (docs/reportlog.md)."""
READ_VERSIONS = (1, 2, 3, 4)
"""Versions the readers accept (a version 1 record has no run id: its run reads as "")."""
ENV_RUN_ID = _env.RUN_ID.name


def default_run_id() -> str:
    """The run id of this job: ``$STRAGGLER_RUN_ID``, else torchrun's ``$TORCHELASTIC_RUN_ID``
    (the same on every rank, and across a job's restarts), else a fresh random id."""
    for value in (_env.RUN_ID.raw(), os.environ.get("TORCHELASTIC_RUN_ID", "").strip()):
        if value and value != "none":  # torchrun's default --rdzv-id is "none"
            return value[:128]
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True)
class ReportContext:
    """What the detector knows about one report besides the `Report` itself."""

    time_s: float
    """Wall-clock time the report finished (Unix seconds)."""
    iteration: int
    """Iterations counted by `generate_report_if_interval_elapsed` so far (0 if never)."""
    window_iterations: int
    """Iterations since the previous report (since `initialize` for the first)."""
    window_s: float
    """Seconds since the previous report (since `initialize` for the first)."""
    report_ms: float
    """Duration of the whole `generate_report` call on this rank (scores, causes), ms."""
    threshold: float = 0.75
    """Score below which a rank is flagged (NVRx's rule, `Report.identify_stragglers`)."""
    sections: int = 0
    """Sections timed on this rank in the window."""
    gpu_timers: int = 0
    """GPU timers feeding GPU scores on this rank in the window."""
    run_id: str = ""
    """The job's run id (`default_run_id`): separates two jobs writing one log."""
    pid: int = 0
    """The reporting rank's process id: a new one within a run id is a restart."""
    restart_count: int | None = None
    """torchrun's ``TORCHELASTIC_RESTART_COUNT`` on the reporting rank (None: not set)."""


def restart_count() -> int | None:
    """torchrun's restart count of this worker (``$TORCHELASTIC_RESTART_COUNT``), or None."""
    try:
        return int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    except (KeyError, ValueError):
        return None


def _num(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _finite_list(values: np.ndarray) -> list[float | None]:
    """A float64 column as a list of Python floats, non-finite entries as None."""
    out: list[float | None] = values.tolist()
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        out[i] = None
    return out


def _column(by_rank: Mapping[int, Any], ranks: list[int]) -> list[float | None]:
    """``by_rank``'s values aligned with ``ranks`` (None: absent, not a number, not finite).

    Whole columns through numpy: at 16,384 ranks a Python conversion per value cost most of
    the record (about 0.3 s a report on rank 0). The scores' dicts are built in rank order, so
    their values are usually taken as they are.
    """
    if list(by_rank) == ranks:
        values: list[Any] = list(by_rank.values())
    else:
        get = by_rank.get
        values = [get(r) for r in ranks]
    try:
        column = np.array(values, dtype=np.float64)  # None -> NaN
    except (TypeError, ValueError):  # an entry that is no number: one at a time
        return [_num(v) for v in values]
    if column.shape != (len(ranks),):  # a sequence among the values
        return [_num(v) for v in values]
    return _finite_list(column)


def _flags(report: Any, threshold: float) -> dict[int, list[str]]:
    """rank -> the metrics on which NVRx's single-report rule flags it."""
    found = report.identify_stragglers(threshold, threshold, threshold, threshold)
    out: dict[int, list[str]] = {}
    for key, metric in (("straggler_gpus_relative", "gpu:relative"),
                        ("straggler_gpus_individual", "gpu:individual")):
        for sid in found[key]:
            out.setdefault(sid.rank, []).append(metric)
    for key, kind in (("straggler_sections_relative", "relative"),
                      ("straggler_sections_individual", "individual")):
        for name, ids in found[key].items():
            for sid in ids:
                out.setdefault(sid.rank, []).append(f"section:{name}:{kind}")
    return {r: sorted(m) for r, m in sorted(out.items())}


def _telemetry_summary(rank_telemetry: Mapping[int, Mapping[str, float]]
                       ) -> dict[str, dict[str, float | None]]:
    """Per field: min, median and max over the ranks that have a finite value, and how many.

    Read from the report's (ranks x fields) `TelemetryTable` as it is: at 16,384 ranks x 50
    NVML fields a Python lookup per value took about 0.7 s, rebuilding the array 64 ms.
    """
    table = TelemetryTable.of(rank_telemetry)
    out: dict[str, dict[str, float | None]] = {}
    for name in table.present_fields():
        a = table.column(name)
        a = a[np.isfinite(a)]
        out[name] = {"min": float(a.min()), "median": float(np.median(a)),
                     "max": float(a.max()), "ranks": int(a.size)}
    return out


def _ranks(report: Any) -> list[int]:
    ranks: set[int] = set(report.group_ranks) | set(report.rank_to_node)
    for scores in (report.gpu_relative_perf_scores, report.gpu_individual_perf_scores):
        ranks |= set(scores)
    return sorted(ranks)


_WAITS_COLUMNS = ("collectives", "waited_s", "time_lost_s", "late_share")


def _waits(waits: Mapping[int, Any], ranks: list[int]) -> dict[str, list[float | None]]:
    """`Report.waits` as columns aligned with ``ranks`` ({} without waits).

    A `WaitsTable` (what the generator builds) is read column by column, without making its
    per-rank `RankWaits` objects; any other mapping one rank at a time.
    """
    if not waits:
        return {}
    if isinstance(waits, WaitsTable):
        out = {}
        for key in _WAITS_COLUMNS:
            column = waits.aligned(ranks, key)
            if key == "collectives":  # a count: `RankWaits.collectives` is int(...)
                column = np.trunc(column)
            out[key] = _finite_list(column)
        return out
    rows = [waits.get(r) for r in ranks]
    return {key: [_num(getattr(w, key)) if w is not None else None for w in rows]
            for key in _WAITS_COLUMNS}


_OWN_TIME_COLUMNS = {"steps": 0, "median_ms": 1, "q25_ms": 2, "q75_ms": 3, "low_ms": 4,
                     "trimmed_ms": 7, "sections_ms": 9}
"""`Report.own_time`'s fields in the record, with their place in `OwnTime` (the policy's recent
part is left out)."""


def _own_time(own: Mapping[int, Any], ranks: list[int]) -> dict[str, list[float | None]]:
    """`Report.own_time` as columns aligned with ``ranks`` ({} without own time)."""
    if not own:
        return {}
    if isinstance(own, OwnTimeTable):
        rows = own.aligned(ranks)  # OwnTime's field order
        return {key: _finite_list(rows[:, i]) for key, i in _OWN_TIME_COLUMNS.items()}
    found = [own.get(r) for r in ranks]
    return {key: [_num(getattr(o, key)) if o is not None else None for o in found]
            for key in _OWN_TIME_COLUMNS}


def _slow_between(report: Any) -> list[dict[str, Any]]:
    """The ranks confirmed slow between collectives, most costly first (`confirmed_between`)."""
    return [{"rank": s.rank, "own_ms": _num(s.own_ms), "peers_ms": _num(s.peers_ms),
             "lost_s": _num(s.lost_s), "share": _num(s.share)}
            for s in confirmed_between(report)]


def _culprit(c: Any) -> dict[str, Any]:
    return {"rank": c.rank, "time_lost_s": _num(c.time_lost_s), "share": _num(c.share),
            "groups": [{"ranks": list(g.ranks), "size": g.size, "time_lost_s": _num(g.time_lost_s),
                        "late_share": _num(g.late_share), "name": g.name} for g in c.groups]}


def report_record(report: Any, context: ReportContext) -> dict[str, Any]:
    """The report-log record (schema ``straggler.report``, `SCHEMA_VERSION`) of `report`."""
    ranks = _ranks(report)
    sections: dict[str, dict[str, list[float | None]]] = {}
    names: Iterable[str] = sorted(set(report.section_relative_perf_scores)
                                  | set(report.section_individual_perf_scores)
                                  | set(report.section_medians_ms))
    for name in names:
        sections[name] = {
            "relative": _column(report.section_relative_perf_scores.get(name, {}), ranks),
            "individual": _column(report.section_individual_perf_scores.get(name, {}), ranks),
            "median_ms": _column(report.section_medians_ms.get(name, {}), ranks)}
    flags = _flags(report, context.threshold)
    confirmed = sorted(s.rank for s in report.confirmed)
    watched = set(flags) | set(confirmed) | set(report.causes)
    causes = [d.as_dict() for _, d in sorted(report.causes.items())]
    states = {}
    for rank, st in sorted(report.straggler_states.items()):
        states[str(rank)] = {"confirmed": bool(st.confirmed), "reasons": dict(st.reasons),
                             "slow_reports": dict(st.slow_reports),
                             "healthy_streak": int(st.healthy_streak)}
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "run_id": context.run_id,
        "pid": context.pid,
        "restart_count": context.restart_count,
        "time": context.time_s,
        "iteration": context.iteration,
        "window_iterations": context.window_iterations,
        "window_s": _num(context.window_s),
        "reporting_rank": report.rank,
        "threshold": context.threshold,
        "ranks": ranks,
        "nodes": [report.rank_to_node.get(r, "<unknown>") for r in ranks],
        "gpu": {"relative": _column(report.gpu_relative_perf_scores, ranks),
                "individual": _column(report.gpu_individual_perf_scores, ranks)},
        "sections": sections,
        "flagged": [{"rank": r, "metrics": m} for r, m in flags.items()],
        "confirmed": confirmed,
        "suspects": sorted(s.rank for s in getattr(report, "suspects", ())),
        "policy": states,
        # Why each suspect is watched (RankState.suspected_on): metric -> rule.
        "suspected_on": {str(rank): dict(st.suspected_on)
                         for rank, st in sorted(report.straggler_states.items())
                         if getattr(st, "suspected_on", None)},
        "causes": causes,
        "waits": _waits(report.waits, ranks),
        "culprits": [_culprit(c) for c in report.culprits],
        "own_time": _own_time(getattr(report, "own_time", None) or {}, ranks),
        "slow_between": _slow_between(report),
        "telemetry": _telemetry_summary(report.rank_telemetry),
        "telemetry_flagged": {str(r): {k: _num(v) for k, v in report.rank_telemetry[r].items()}
                              for r in sorted(watched) if r in report.rank_telemetry},
        "overhead": {"report_ms": _num(context.report_ms),
                     "scores_ms": _num(report.generate_report_elapsed_time),
                     "sections": context.sections, "gpu_timers": context.gpu_timers},
    }
