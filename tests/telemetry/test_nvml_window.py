"""Per-window reduction of raw NVML samples to the fixed telemetry vector (pure, no library)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from straggler.telemetry.window import (
    FIELDS,
    RAW_FIELDS,
    WindowAggregator,
    aggregate_window,
    as_mapping,
)

COL = {name: i for i, name in enumerate(RAW_FIELDS)}


def _rows(n, **columns):
    """n samples, 1 s apart; each column a scalar or a sequence of n values (default NaN)."""
    v = np.full((n, len(RAW_FIELDS)), np.nan)
    for name, values in columns.items():
        v[:, COL[name]] = values
    return np.arange(n, dtype=float), v


def test_numeric_fields_get_min_mean_max_ignoring_absent_samples():
    t, v = _rows(4, sm_clock_mhz=[1980, 1500, np.nan, 1800], gpu_temp_c=60)
    out = dict(zip(FIELDS, aggregate_window(t, v), strict=True))
    assert (out["sm_clock_mhz_min"], out["sm_clock_mhz_max"]) == (1500, 1980)
    assert out["sm_clock_mhz_mean"] == pytest.approx(1760)
    assert out["gpu_temp_c_mean"] == 60
    assert math.isnan(out["power_w_mean"])  # never sampled: absent
    assert out["nvml_samples"] == 4


def test_throttle_reasons_become_the_share_of_samples_with_each_bit():
    t, v = _rows(4, clocks_event_reasons=[0x4, 0x4 | 0x20, 0, np.nan])
    out = dict(zip(FIELDS, aggregate_window(t, v), strict=True))
    assert out["reason_sw_power_cap_frac"] == pytest.approx(2 / 3)  # of the 3 known samples
    assert out["reason_sw_thermal_frac"] == pytest.approx(1 / 3)
    assert out["reason_hw_slowdown_frac"] == 0


def test_limits_keep_the_tightest_value_and_pcie_limits_have_their_own_names():
    t, v = _rows(3, power_limit_w=[700, 500, 700], pcie_gen=[5, 3, 5], pcie_gen_max=5,
                 pcie_width=16, pcie_width_max=16)
    out = dict(zip(FIELDS, aggregate_window(t, v), strict=True))
    assert out["power_limit_w"] == 500
    assert out["pcie_gen_limit"] == 5 and out["pcie_gen_min"] == 3 and out["pcie_gen_max"] == 5
    assert out["pcie_width_limit"] == 16


def test_counters_grow_across_windows_without_losing_the_gap_between_reports():
    agg = WindowAggregator()
    # Window 1: t=0..2 s, 0.5 s of power violation in total (counter in ns).
    out1 = dict(zip(FIELDS, agg(np.array([0.0, 1.0, 2.0]),
                                _rows(3, power_violation_ns=[0, 2.5e8, 5e8],
                                      ecc_corrected_volatile=[1, 1, 2])[1]), strict=True))
    assert out1["power_violation_frac"] == pytest.approx(0.25)
    assert out1["ecc_corrected_delta"] == 1
    assert out1["nvml_window_s"] == 2
    # Window 2: t=3..4 s; growth from the last sample of window 1 (t=2) counts here.
    out2 = dict(zip(FIELDS, agg(np.array([3.0, 4.0]),
                                _rows(2, power_violation_ns=[1.5e9, 2.5e9],
                                      ecc_corrected_volatile=[2, 2])[1]), strict=True))
    assert out2["nvml_window_s"] == 2
    assert out2["power_violation_frac"] == pytest.approx(1.0)  # 2 s of 2 s
    assert out2["ecc_corrected_delta"] == 0


def test_a_counter_that_went_backwards_gives_no_delta():
    agg = WindowAggregator()
    agg(np.array([0.0, 1.0]), _rows(2, thermal_violation_ns=[5e9, 6e9])[1])
    out = dict(zip(FIELDS, agg(np.array([2.0, 3.0]),
                               _rows(2, thermal_violation_ns=[0, 1e8])[1]), strict=True))
    assert math.isnan(out["thermal_violation_frac"])  # driver reload: counter reset


def test_an_empty_window_has_zero_samples_and_nothing_else():
    out = aggregate_window(np.zeros(0), np.zeros((0, len(RAW_FIELDS))))
    assert as_mapping(out) == {"nvml_samples": 0.0}
