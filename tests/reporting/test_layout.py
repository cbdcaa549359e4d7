"""The gathered vector's layout (straggler/reporting/layout.py): pack one row per rank, unpack
the group's rows into Report fields (pure: no process group)."""

from __future__ import annotations

import math

import numpy as np
from straggler.reporting.layout import RankScores, pack, present, row_length, unpack

NAN = math.nan
SECTION_IDS = {"step": 0, "data": 1, "gone": 2}  # "gone": in the registry, used by no rank


def _row(gpu_ind, gpu_rel, names, ind, rel, med, telemetry, robust_rel=None, quartiles=None):
    # The robust individual scores are half NVRx's here, to tell the two apart.
    ids = np.array([SECTION_IDS[n] for n in names], dtype=np.int64)
    scores = RankScores(gpu_ind, gpu_rel, np.array(ind), np.array(rel), gpu_ind / 2,
                        np.array(ind) / 2)
    if robust_rel is not None:
        scores.robust_gpu_rel, scores.robust_sec_rel = robust_rel[0], np.array(robust_rel[1])
    q = None if quartiles is None else np.array(quartiles, dtype=np.float64).reshape(
        len(names), -1)
    return pack(scores, ids, len(SECTION_IDS), np.array(med), np.array(telemetry), q)


def test_rows_unpack_into_the_report_fields_by_registry_id():
    # Rank 10 lists its sections in another order than rank 11: ids, not positions, decide.
    rows = np.stack([_row(1.0, 0.9, ["step", "data"], [1.0, 0.8], [0.9, 0.7], [10.0, 2.0],
                          [300.0, NAN], quartiles=[(9.0, 12.0, 8.0, 11.0, 9.5),
                                                   (1.5, 2.5, NAN, NAN, NAN)]),
                     _row(0.5, 1.0, ["data"], [1.0], [1.0], [1.5], [NAN, 60.0])])
    assert rows.shape == (2, 2 + 8 * 3 + 2 + 1 + 3) == (2, row_length(3, 2, False))
    out = unpack(rows, [10, 11], SECTION_IDS, ("power_w", "temp_c"), relative=True,
                 individual=True)
    assert out["gpu_relative_perf_scores"] == {10: 0.9, 11: 1.0}
    assert out["gpu_individual_perf_scores"] == {10: 1.0, 11: 0.5}
    assert set(out["section_relative_perf_scores"]) == {"step", "data"}  # "gone" is left out
    assert out["section_relative_perf_scores"]["data"] == {10: 0.7, 11: 1.0}
    assert math.isnan(out["section_individual_perf_scores"]["step"][11])
    assert out["section_medians_ms"] == {"step": {10: 10.0}, "data": {10: 2.0, 11: 1.5}}
    assert out["rank_telemetry"] == {10: {"power_w": 300.0}, 11: {"temp_c": 60.0}}
    # The window's quartiles: only where a rank sent them.
    assert out["section_quartiles_ms"] == {"step": {10: (9.0, 12.0)}, "data": {10: (1.5, 2.5)}}
    # ... and their low percentile (the fast steps the policy's evidence reads).
    assert out["section_low_ms"] == {"step": {10: 8.0}, "data": {}}
    # ... and the median and low percentile of the window's recent part.
    assert out["section_recent_ms"] == {"step": {10: (11.0, 9.5)}, "data": {}}
    # Ours: the robust individual scores; the robust relative ones are NVRx's ("min").
    assert out["robust_gpu_individual_scores"] == {10: 0.5, 11: 0.25}
    assert out["robust_section_individual_scores"]["data"] == {10: 0.4, 11: 0.5}
    assert out["robust_gpu_relative_scores"] == out["gpu_relative_perf_scores"]
    assert repr(out["robust_section_relative_scores"]) == \
        repr(out["section_relative_perf_scores"])  # NaN != NaN: compare the text


def test_robust_relative_scores_travel_when_they_differ_from_nvrx():
    rows = np.stack([_row(1.0, 0.5, ["step"], [1.0], [0.5], [10.0], [], (1.0, [1.0])),
                     _row(1.0, 1.0, ["step"], [1.0], [1.0], [5.0], [], (2.0, [2.0]))])
    assert rows.shape == (2, row_length(3, 0, True))
    out = unpack(rows, [0, 1], SECTION_IDS, (), relative=True, individual=True)
    assert out["gpu_relative_perf_scores"] == {0: 0.5, 1: 1.0}
    assert out["robust_gpu_relative_scores"] == {0: 1.0, 1: 2.0}
    assert out["robust_section_relative_scores"] == {"step": {0: 1.0, 1: 2.0}}


def test_score_kinds_not_computed_are_empty():
    rows = _row(NAN, NAN, ["step"], [NAN], [NAN], [10.0], [])[None, :]
    out = unpack(rows, [0], SECTION_IDS, (), relative=False, individual=False)
    assert out["gpu_relative_perf_scores"] == {} and out["section_individual_perf_scores"] == {}
    assert out["section_medians_ms"] == {"step": {0: 10.0}} and out["rank_telemetry"] == {0: {}}


def test_present_drops_absent_values():
    assert present(("a", "b"), np.array([NAN, 2.0])) == {"b": 2.0}
