"""`TelemetryTable`: the report's per-rank telemetry over one array reads as the dict it
replaces, and its whole-field readers agree with reading the dicts one by one."""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pytest
from straggler.analysis.causes import diagnose
from straggler.analysis.telemetry_table import TelemetryTable
from straggler.reporting import layout

from _reports import HEALTHY, make_report

NAN = math.nan


def test_a_table_reads_as_the_dict_of_each_ranks_present_fields():
    table = TelemetryTable([7, 3, 5], ["power_w", "temp_c"],
                           np.array([[300.0, NAN], [NAN, NAN], [250.0, 61.0]]))
    expected = {7: {"power_w": 300.0}, 3: {}, 5: {"power_w": 250.0, "temp_c": 61.0}}
    assert table == expected and dict(table) == expected and list(table) == [7, 3, 5]
    assert table[5] == {"power_w": 250.0, "temp_c": 61.0} and table.get(4) is None
    with pytest.raises(KeyError):
        table[4]
    assert table.present_fields() == ["power_w", "temp_c"]
    assert table.by_rank("power_w") == {7: 300.0, 5: 250.0} and table.by_rank("fan") == {}
    assert np.isnan(table.column("fan")).all()


def test_a_dict_becomes_the_same_table_whether_or_not_every_rank_has_every_field():
    full = {0: {"a": 1.0, "b": 2.0}, 1: {"a": 3.0, "b": 4.0}}
    assert TelemetryTable.of(full) == full
    partial = {0: {"a": 1.0}, 1: {"b": None}, 2: {}}  # None: not a number, so absent
    table = TelemetryTable.of(partial)
    assert table == {0: {"a": 1.0}, 1: {}, 2: {}} and table.present_fields() == ["a"]
    assert TelemetryTable.of(table) is table and TelemetryTable.of({}) == {}


def test_peer_medians_are_the_median_of_the_finite_values_of_the_ranks_left():
    rng = np.random.default_rng(0)
    values = rng.uniform(1000, 2000, size=(9, 2))
    values[[1, 4], 0] = NAN
    table = TelemetryTable(range(9), ["clock", "fan"], values)
    peers = table.peer_medians(exclude={0, 8})
    kept = [table[r]["clock"] for r in range(1, 8) if "clock" in table[r]]
    assert peers.ranks == 7 and peers("clock") == statistics.median(kept)
    assert math.isnan(peers("power")) and math.isnan(table.peer_medians(range(9))("fan"))


def test_unpack_gives_a_table_and_the_causes_read_it_as_they_read_the_dicts():
    fields = sorted(HEALTHY)
    rows = np.full((4, layout.row_length(1, len(fields), True)), NAN)
    first = layout.telemetry_offset(1)
    rows[:, first:first + len(fields)] = [HEALTHY[f] for f in fields]
    rows[2, first + fields.index("sm_clock_mhz_mean")] = 1100.0
    rows[2, first + fields.index("gpu_temp_c_max")] = NAN
    telemetry = layout.unpack(rows, [0, 1, 2, 3], {"step": 0}, fields, True, True
                              )["rank_telemetry"]
    assert isinstance(telemetry, TelemetryTable) and "gpu_temp_c_max" not in telemetry[2]
    as_dicts = {r: dict(telemetry[r]) for r in telemetry}
    from_table = diagnose(dataclasses.replace(make_report(gpu={2: 0.6}),
                                              rank_telemetry=telemetry))[2]
    from_dicts = diagnose(dataclasses.replace(make_report(gpu={2: 0.6}),
                                              rank_telemetry=as_dicts))[2]
    assert from_table == from_dicts
    assert "1100 MHz vs 1980 MHz (peers' median)" in from_table.evidence


def test_a_table_is_a_mapping_in_full():
    table = TelemetryTable([1, 2], ["a"], np.array([[1.0], [NAN]]))
    assert list(table.keys()) == [1, 2] and list(table.values()) == [{"a": 1.0}, {}]
    assert dict(table.items()) == {1: {"a": 1.0}, 2: {}} and 2 in table and 3 not in table
    assert TelemetryTable([], ["a"], np.empty((0, 1))).present_fields() == []
