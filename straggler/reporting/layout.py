"""The gathered vector of one rank: its scores, section medians and telemetry at fixed offsets.

``[gpu_ind, gpu_rel, sec_ind(S), sec_rel(S), sec_med(S), sec_q25(S), sec_q75(S), sec_low(S),
sec_recent_med(S), sec_recent_low(S), telemetry(F), robust_gpu_ind, robust_sec_ind(S)]``, then
``[robust_gpu_rel, robust_sec_rel(S)]`` when the robust relative scores differ from NVRx's (a
``"median"`` reference), with ``S`` the sections of the name registry
(`straggler.reporting.registry`, by id) and ``F`` the telemetry fields; NaN where a rank has no
value. ``sec_q25``/``sec_q75``: the quartiles of each section's
times in the window, the within-window spread the verdict policy weighs each median by, and
``sec_low`` their low percentile (`straggler.timing.registry.LOW_PERCENTILE`: the rank's fast
steps, which the policy's evidence reads; docs/policy.md); ``sec_recent_med``/``sec_recent_low``
the median and low percentile of the window's last steps (`straggler.analysis.recent`: a
straggler that starts inside the window). The first scores are NVRx's (its field names), the
``robust_`` ones ours.
`pack` builds one rank's row, `unpack` turns the group's rows back into the `Report` fields
they carry. Pure numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..analysis.telemetry_table import TelemetryTable

__all__ = ["RankScores", "pack", "present", "row_length", "telemetry_offset", "unpack"]

#: Per-section columns before the telemetry: ind, rel, med, q25, q75, low, recent med and low.
_SECTION_COLUMNS = 8


@dataclass
class RankScores:
    """One rank's scores of one report; section arrays follow the rank's own section order.

    ``gpu_*`` are floats and ``sec_*`` arrays (NaN: no score). ``robust_gpu_rel`` and
    ``robust_sec_rel`` are None when they equal NVRx's (``"min"`` reference).
    """

    gpu_ind: float
    gpu_rel: float
    sec_ind: np.ndarray
    sec_rel: np.ndarray
    robust_gpu_ind: float
    robust_sec_ind: np.ndarray
    robust_gpu_rel: float | None = None
    robust_sec_rel: np.ndarray | None = None


def row_length(n_sections: int, n_telemetry: int, robust_relative: bool) -> int:
    """Values in one rank's row."""
    return (telemetry_offset(n_sections) + 1 + n_sections + n_telemetry
            + (1 + n_sections if robust_relative else 0))


def telemetry_offset(n_sections: int) -> int:
    """The column of a row's first telemetry value (after the per-section columns)."""
    return 2 + _SECTION_COLUMNS * n_sections


def pack(scores: RankScores, section_ids: np.ndarray, n_sections: int, sec_med: np.ndarray,
         telemetry: np.ndarray, sec_quartiles: np.ndarray | None = None) -> np.ndarray:
    """One rank's row; ``section_ids`` are the registry ids of the sections' values.

    ``sec_quartiles``: ``(sections, 2)`` lower and upper quartiles (ms), ``(sections, 3)``
    with the low percentile as well, ``(sections, 5)`` with the recent part's median and low
    percentile too; NaN or None: unknown.
    """
    robust_relative = scores.robust_sec_rel is not None
    n, nt = n_sections, len(telemetry)
    row = np.full(row_length(n, nt, robust_relative), math.nan)
    row[0], row[1] = scores.gpu_ind, scores.gpu_rel
    row[2 + section_ids] = scores.sec_ind
    row[2 + n + section_ids] = scores.sec_rel
    row[2 + 2 * n + section_ids] = sec_med
    if sec_quartiles is not None:
        row[2 + 3 * n + section_ids] = sec_quartiles[:, 0]
        row[2 + 4 * n + section_ids] = sec_quartiles[:, 1]
        for j in range(2, min(sec_quartiles.shape[1], 5)):
            row[2 + (3 + j) * n + section_ids] = sec_quartiles[:, j]
    first = telemetry_offset(n)
    row[first:first + nt] = telemetry
    tail = first + nt
    row[tail] = scores.robust_gpu_ind
    row[tail + 1 + section_ids] = scores.robust_sec_ind
    if robust_relative:
        tail += 1 + n
        row[tail] = scores.robust_gpu_rel
        row[tail + 1 + section_ids] = scores.robust_sec_rel
    return row


def unpack(rows: np.ndarray, ranks: Sequence[int], section_ids: Mapping[str, int],
           telemetry_fields: Sequence[str], relative: bool, individual: bool
           ) -> dict[str, Any]:
    """The `Report` fields of the group's rows (row i: global rank ``ranks[i]``).

    Sections no rank has a median for are left out; so are the score kinds not computed.
    """
    n_sec, nt = len(section_ids), len(telemetry_fields)
    id_to_name = {i: n for n, i in section_ids.items()}
    first = telemetry_offset(n_sec)
    tail = first + nt
    robust_relative = rows.shape[1] == row_length(n_sec, nt, True)

    # Whole columns to Python floats at once (tolist), not one numpy scalar per rank: at 16,384
    # ranks the per-element reads cost most of the report's unpacking.
    rank_list = list(ranks)
    rank_array = np.asarray(rank_list)

    def per_rank(column: int) -> dict[int, float]:
        return dict(zip(rank_list, rows[:, column].tolist(), strict=True))

    def present_only(column: int) -> dict[int, float]:
        values = rows[:, column]
        keep = ~np.isnan(values)
        return dict(zip(rank_array[keep].tolist(), values[keep].tolist(), strict=True))

    in_use = [i for i in range(n_sec) if not np.isnan(rows[:, 2 + 2 * n_sec + i]).all()]

    def pairs(first: int, second: int, both: bool) -> dict[int, tuple[float, float]]:
        """Two columns as ``{rank: (first, second)}``, for the ranks with the first value (and
        the second as well when ``both``)."""
        a, b = rows[:, first], rows[:, second]
        keep = ~(np.isnan(a) | np.isnan(b)) if both else ~np.isnan(a)
        return dict(zip(rank_array[keep].tolist(),
                        zip(a[keep].tolist(), b[keep].tolist(), strict=True), strict=True))

    def per_section(offset: int) -> dict[str, dict[int, float]]:
        return {id_to_name[i]: per_rank(offset + i) for i in in_use}

    rel_gpu, rel_sec = (tail + 1 + n_sec, tail + 2 + n_sec) if robust_relative \
        else (1, 2 + n_sec)
    return {
        "gpu_relative_perf_scores": per_rank(1) if relative else {},
        "section_relative_perf_scores": per_section(2 + n_sec) if relative else {},
        "gpu_individual_perf_scores": per_rank(0) if individual else {},
        "section_individual_perf_scores": per_section(2) if individual else {},
        "robust_gpu_relative_scores": per_rank(rel_gpu) if relative else {},
        "robust_section_relative_scores": per_section(rel_sec) if relative else {},
        "robust_gpu_individual_scores": per_rank(tail) if individual else {},
        "robust_section_individual_scores": per_section(tail + 1) if individual else {},
        "section_medians_ms": {id_to_name[i]: present_only(2 + 2 * n_sec + i) for i in in_use},
        "rank_telemetry": TelemetryTable(rank_array, telemetry_fields,
                                         rows[:, first:tail].copy()),
        "section_quartiles_ms": {id_to_name[i]: pairs(2 + 3 * n_sec + i, 2 + 4 * n_sec + i, True)
                                 for i in in_use},
        "section_low_ms": {id_to_name[i]: present_only(2 + 5 * n_sec + i) for i in in_use},
        "section_recent_ms": {id_to_name[i]: pairs(2 + 6 * n_sec + i, 2 + 7 * n_sec + i, False)
                              for i in in_use},
    }


def present(fields: Sequence[str], values: np.ndarray) -> dict[str, float]:
    """``{field: value}`` of a telemetry vector, absent (NaN) values left out."""
    return {f: float(v) for f, v in zip(fields, values, strict=True) if not math.isnan(v)}
