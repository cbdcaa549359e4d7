"""The gathered vector's layout (straggler/reporting/layout.py): pack one row per rank, unpack
the group's rows into Report fields (pure: no process group)."""

from __future__ import annotations

import math

import numpy as np
from straggler.reporting.layout import pack, present, unpack

NAN = math.nan
SECTION_IDS = {"step": 0, "data": 1, "gone": 2}  # "gone": in the registry, used by no rank


def _row(gpu_ind, gpu_rel, names, ind, rel, med, telemetry):
    ids = np.array([SECTION_IDS[n] for n in names], dtype=np.int64)
    return pack(gpu_ind, gpu_rel, ids, len(SECTION_IDS), np.array(ind), np.array(rel),
                np.array(med), np.array(telemetry))


def test_rows_unpack_into_the_report_fields_by_registry_id():
    # Rank 10 lists its sections in another order than rank 11: ids, not positions, decide.
    rows = np.stack([_row(1.0, 0.9, ["step", "data"], [1.0, 0.8], [0.9, 0.7], [10.0, 2.0],
                          [300.0, NAN]),
                     _row(0.5, 1.0, ["data"], [1.0], [1.0], [1.5], [NAN, 60.0])])
    assert rows.shape == (2, 2 + 3 * 3 + 2)
    out = unpack(rows, [10, 11], SECTION_IDS, ("power_w", "temp_c"), relative=True,
                 individual=True)
    assert out["gpu_relative_perf_scores"] == {10: 0.9, 11: 1.0}
    assert out["gpu_individual_perf_scores"] == {10: 1.0, 11: 0.5}
    assert set(out["section_relative_perf_scores"]) == {"step", "data"}  # "gone" is left out
    assert out["section_relative_perf_scores"]["data"] == {10: 0.7, 11: 1.0}
    assert math.isnan(out["section_individual_perf_scores"]["step"][11])
    assert out["section_medians_ms"] == {"step": {10: 10.0}, "data": {10: 2.0, 11: 1.5}}
    assert out["rank_telemetry"] == {10: {"power_w": 300.0}, 11: {"temp_c": 60.0}}


def test_score_kinds_not_computed_are_empty():
    rows = _row(NAN, NAN, ["step"], [NAN], [NAN], [10.0], [])[None, :]
    out = unpack(rows, [0], SECTION_IDS, (), relative=False, individual=False)
    assert out["gpu_relative_perf_scores"] == {} and out["section_individual_perf_scores"] == {}
    assert out["section_medians_ms"] == {"step": {0: 10.0}} and out["rank_telemetry"] == {0: {}}


def test_present_drops_absent_values():
    assert present(("a", "b"), np.array([NAN, 2.0])) == {"b": 2.0}
