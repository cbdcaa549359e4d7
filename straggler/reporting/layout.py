"""The gathered vector of one rank: its scores, section medians and telemetry at fixed offsets.

``[gpu_ind, gpu_rel, sec_ind(S), sec_rel(S), sec_med(S), telemetry(F)]`` with ``S`` the
sections of the name registry (`straggler.reporting.registry`, by id) and ``F`` the telemetry
fields; NaN where a rank has no value. `pack` builds one rank's row, `unpack` turns the group's
rows back into the `Report` fields they carry. Pure numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["pack", "present", "unpack"]


def pack(gpu_ind: float, gpu_rel: float, section_ids: np.ndarray, n_sections: int,
         sec_ind: np.ndarray, sec_rel: np.ndarray, sec_med: np.ndarray,
         telemetry: np.ndarray) -> np.ndarray:
    """One rank's row; ``section_ids`` are the registry ids of the sections' values."""
    row = np.full(2 + 3 * n_sections + len(telemetry), math.nan)
    row[0], row[1] = gpu_ind, gpu_rel
    row[2 + section_ids] = sec_ind
    row[2 + n_sections + section_ids] = sec_rel
    row[2 + 2 * n_sections + section_ids] = sec_med
    row[2 + 3 * n_sections:] = telemetry
    return row


def unpack(rows: np.ndarray, ranks: Sequence[int], section_ids: Mapping[str, int],
           telemetry_fields: Sequence[str], relative: bool, individual: bool
           ) -> dict[str, Any]:
    """The `Report` fields of the group's rows (row i: global rank ``ranks[i]``).

    Sections no rank has a median for are left out; so are the score kinds not computed.
    """
    n_sec = len(section_ids)
    id_to_name = {i: n for n, i in section_ids.items()}

    def per_rank(column: int) -> dict[int, float]:
        return {r: float(rows[i, column]) for i, r in enumerate(ranks)}

    in_use = [i for i in range(n_sec) if not np.isnan(rows[:, 2 + 2 * n_sec + i]).all()]

    def per_section(offset: int) -> dict[str, dict[int, float]]:
        return {id_to_name[i]: per_rank(offset + i) for i in in_use}

    return {
        "gpu_relative_perf_scores": per_rank(1) if relative else {},
        "section_relative_perf_scores": per_section(2 + n_sec) if relative else {},
        "gpu_individual_perf_scores": per_rank(0) if individual else {},
        "section_individual_perf_scores": per_section(2) if individual else {},
        "section_medians_ms": {id_to_name[i]: {r: m for r, m in per_rank(2 + 2 * n_sec + i).items()
                                               if not math.isnan(m)} for i in in_use},
        "rank_telemetry": {r: present(telemetry_fields, rows[i, 2 + 3 * n_sec:])
                           for i, r in enumerate(ranks)},
    }


def present(fields: Sequence[str], values: np.ndarray) -> dict[str, float]:
    """``{field: value}`` of a telemetry vector, absent (NaN) values left out."""
    return {f: float(v) for f, v in zip(fields, values, strict=True) if not math.isnan(v)}
