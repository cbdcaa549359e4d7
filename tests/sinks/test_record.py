"""The report-log record of a fixed report, byte for byte, and its JSON line.

``tests/data/report_records.json`` holds the records the per-rank code (before the columns
were converted whole, 2026-11-24) made of the reports below; the columnar code must make the
same ones. A field added to the record later is not in the file and not compared; a change to
a field that is must be deliberate (regenerate the file, bump `SCHEMA_VERSION`).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from straggler.analysis.causes import Cause, Diagnosis
from straggler.analysis.policy import RankState
from straggler.analysis.waits import Culprit, CulpritGroup, WaitsTable
from straggler.reporting.report import Report, StragglerId
from straggler.sinks import reportlog
from straggler.sinks.record import ReportContext, report_record

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "report_records.json"
CONTEXT = ReportContext(time_s=1.7e9, iteration=400, window_iterations=100, window_s=60.0,
                        report_ms=50.0, threshold=0.75, sections=2, gpu_timers=3, run_id="fixed")


def fixed_report(plain_waits: bool = False) -> Report:
    """Six ranks with every kind of value the record converts: in rank order and not, missing
    ranks, NaN, infinities, numpy scalars, ints, and waits as columns or as plain objects."""
    nan, inf = math.nan, math.inf
    waits = WaitsTable(ranks=np.array([4, 0, 1, 2, 3]),  # not in rank order; rank 5 has none
                       collectives=np.array([12.0, 12.0, 11.0, 12.0, 0.0]),
                       waited_s=np.array([0.5, 0.25, nan, 1.0 / 3.0, 0.0]),
                       time_lost_s=np.array([2.5, 0.0, 0.125, inf, 0.0]),
                       late_share=np.array([0.75, 0.0, 0.1, 0.2, -inf]))
    if plain_waits:
        waits = {int(r): waits[int(r)] for r in (0, 1, 2, 4)}
    return Report(
        gpu_relative_perf_scores={r: [1.0, 0.9876543210987654, nan, inf, 0.5, 1.0][r]
                                  for r in range(6)},
        section_relative_perf_scores={
            "step": {r: 1.0 - r / 7.0 for r in range(6)},
            "data": {3: np.float64(0.25), 0: 1.0, 5: -inf}},  # out of order, ranks missing
        gpu_individual_perf_scores={5: 1, 1: 0.5, 0: 0.75},  # ints too
        section_individual_perf_scores={"step": {r: (nan if r == 2 else 0.1 * r)
                                                 for r in range(6)}},
        rank_to_node={r: f"node{r // 2}" for r in range(5)},  # rank 5: "<unknown>"
        local_section_summaries={}, local_kernel_summaries={},
        generate_report_elapsed_time=12.5, gather_on_rank0=True, rank=0,
        section_medians_ms={"step": {r: 100.0 + r for r in range(6) if r != 1},
                            "data": {0: 3.0, 1: None}},
        rank_telemetry={0: {"sm_clock_mhz_mean": 1980.0, "gpu_temp_c_max": 60.0},
                        4: {"sm_clock_mhz_mean": 1410.0, "gpu_temp_c_max": 91.0},
                        5: {"gpu_temp_c_max": 61.5}},
        group_ranks=tuple(range(6)),
        confirmed=frozenset({StragglerId(4, "node2")}),
        suspects=frozenset({StragglerId(3, "node1")}),
        straggler_states={4: RankState(4, True, {"step": "relative"}, {"step": 3}, 0),
                          3: RankState(3, False, {}, {"gpu": 1}, 2)},
        causes={4: Diagnosis(4, Cause.GPU_THERMAL_THROTTLING, "91 C",
                             {"gpu_temp_c_max": 91.0, "x": nan})},
        waits=waits,
        culprits=(Culprit(4, 2.5, 0.01, (CulpritGroup((0, 4), 2, 2.5, 0.75, "world"),)),))


def _records() -> dict[str, dict]:
    return {"columns": report_record(fixed_report(), CONTEXT),
            "plain_waits": report_record(fixed_report(plain_waits=True), CONTEXT)}


@pytest.mark.parametrize("name", ["columns", "plain_waits"])
def test_the_record_of_a_fixed_report_is_the_one_the_per_rank_code_made(name):
    expected = json.loads(GOLDEN.read_text())[name]
    record = _records()[name]
    for key, value in expected.items():
        assert record[key] == value, key
        # The same JSON text too: 1 and 1.0, None and NaN are equal in Python, not in the log.
        assert json.dumps(record[key]) == json.dumps(value), key


def test_a_column_with_an_entry_that_is_no_number_reads_it_as_none():
    report = dataclasses.replace(
        fixed_report(), section_medians_ms={"step": {r: ("slow" if r == 1 else 2.0)
                                                     for r in range(6)}})
    assert report_record(report, CONTEXT)["sections"]["step"]["median_ms"] == [
        2.0, None, 2.0, 2.0, 2.0, 2.0]


def test_the_line_is_json_dumps_whatever_the_chunk_size(monkeypatch):
    record = _records()["columns"]
    expected = (json.dumps(record, separators=(",", ":"), allow_nan=False, default=str)
                + "\n").encode()
    for chunk in (1, 2, 5, 512):
        monkeypatch.setattr(reportlog, "_CHUNK", chunk)
        assert reportlog.encode_line(record) == expected
    odd = {"keys": {1: "int keys are converted by json"}, "long": list(range(7)), "empty": {}}
    monkeypatch.setattr(reportlog, "_CHUNK", 2)
    assert reportlog.encode_line(odd) == (json.dumps(odd, separators=(",", ":")) + "\n").encode()
    with pytest.raises(ValueError):  # a NaN is refused, as json.dumps(allow_nan=False) does
        reportlog.encode_line({"x": [1.0, 2.0, math.nan]})


def test_the_telemetry_summary_reads_every_rank_whether_or_not_it_has_every_field():
    full = {r: {"power_w_mean": 100.0 * (r + 1), "gpu_temp_c_max": 60.0 + r} for r in range(4)}
    summary = {"gpu_temp_c_max": {"min": 60.0, "median": 61.5, "max": 63.0, "ranks": 4},
               "power_w_mean": {"min": 100.0, "median": 250.0, "max": 400.0, "ranks": 4}}
    report = dataclasses.replace(fixed_report(), rank_telemetry=full)
    assert report_record(report, CONTEXT)["telemetry"] == summary
    full[1] = {"power_w_mean": math.nan}  # rank 1: no temperature, no finite power
    report = dataclasses.replace(fixed_report(), rank_telemetry=full)
    assert report_record(report, CONTEXT)["telemetry"] == {
        "gpu_temp_c_max": {"min": 60.0, "median": 62.0, "max": 63.0, "ranks": 3},
        "power_w_mean": {"min": 100.0, "median": 300.0, "max": 400.0, "ranks": 3}}


def test_a_suspect_carries_why_it_is_watched_into_the_record():
    # Before: a suspect's line read "reasons": {}, "slow_reports": {} (tests/data/
    # reportlog_demo.jsonl, the demo's first reports): watched, with no reason given.
    report = fixed_report()
    suspect = RankState(3, False, {}, {"gpu": 1}, 2, suspected_on={"gpu": "warm-up"})
    report = dataclasses.replace(report, straggler_states={**report.straggler_states,
                                                           3: suspect})
    record = report_record(report, CONTEXT)
    assert record["suspected_on"] == {"3": {"gpu": "warm-up"}}  # the confirmed rank 4: none
    assert record["policy"]["3"]["reasons"] == {}  # reasons stay the confirming rules
