"""The report window: raw NVML samples reduced to one fixed-length vector per report.

`WindowAggregator` reduces the samples of one window to `FIELDS`: min / mean / max of the
numeric values, the share of samples with each clocks-event (throttle) reason, and the growth of
the cumulative counters (violation time as a share of the window, ECC errors). The vector rides
in the report's gathered float64 tensor (`ReportGenerator(telemetry_fields=FIELDS)`), so
telemetry costs no extra collective; NaN means "absent" (not supported by this GPU, or no NVML).
Pure numpy: the samples come from `straggler.telemetry.nvml.NvmlTelemetry`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["FIELDS", "RAW_FIELDS", "REASONS", "WindowAggregator", "aggregate_window",
           "as_mapping"]

# Columns of one raw sample, as `straggler._core.NVML_FIELDS` orders them.
RAW_FIELDS: tuple[str, ...] = (
    "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "mem_clock_max_mhz", "power_w",
    "power_limit_w", "gpu_temp_c", "mem_temp_c", "clocks_event_reasons", "power_violation_ns",
    "thermal_violation_ns", "gpu_util_pct", "mem_util_pct", "mem_used_mib", "pcie_gen",
    "pcie_gen_max", "pcie_width", "pcie_width_max", "ecc_corrected_volatile",
    "ecc_uncorrected_volatile")

# Clocks-event reasons (nvml.h nvmlClocksEventReason*): name -> bit.
REASONS: tuple[tuple[str, int], ...] = (
    ("idle", 0x1), ("applications_clocks", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
    ("sync_boost", 0x10), ("sw_thermal", 0x20), ("hw_thermal", 0x40),
    ("hw_power_brake", 0x80), ("display_clock", 0x100))

_NUMERIC = ("sm_clock_mhz", "mem_clock_mhz", "power_w", "gpu_temp_c", "mem_temp_c",
            "gpu_util_pct", "mem_util_pct", "mem_used_mib", "pcie_gen", "pcie_width")
# Limits: raw field -> vector field, the tightest value of the window (they rarely change; a
# lowered power cap does). The PCIe ones are renamed: "pcie_gen_max" is the window's maximum.
_LIMITS = {"sm_clock_max_mhz": "sm_clock_max_mhz", "mem_clock_max_mhz": "mem_clock_max_mhz",
           "power_limit_w": "power_limit_w", "pcie_gen_max": "pcie_gen_limit",
           "pcie_width_max": "pcie_width_limit"}
_COUNTERS = ("power_violation_frac", "thermal_violation_frac", "ecc_corrected_delta",
             "ecc_uncorrected_delta")

FIELDS: tuple[str, ...] = (
    tuple(f"{name}_{stat}" for name in _NUMERIC for stat in ("min", "mean", "max"))
    + tuple(_LIMITS.values())
    + tuple(f"reason_{name}_frac" for name, _ in REASONS)
    + _COUNTERS
    + ("nvml_samples", "nvml_window_s"))
"""Names of the per-report telemetry vector, stable across releases (append only)."""

_COL = {name: i for i, name in enumerate(RAW_FIELDS)}
_NUMERIC_COLS = [_COL[name] for name in _NUMERIC]
_LIMIT_COLS = [_COL[raw] for raw in _LIMITS]
_REASON_BITS = np.array([bit for _, bit in REASONS], dtype=np.uint64)


class WindowAggregator:
    """Reduces the raw samples of successive report windows to `FIELDS` vectors.

    Keeps the last counter values of the previous window, so counter growth between windows is
    attributed to the window where it ended (nothing is lost between two reports).
    """

    def __init__(self) -> None:
        self._last_t: float = math.nan
        self._last_counters: dict[str, float] = {}

    def __call__(self, timestamps_s: np.ndarray, values: np.ndarray) -> np.ndarray:
        """`FIELDS` vector for one window of samples (``values``: n x len(RAW_FIELDS))."""
        t = np.asarray(timestamps_s, dtype=np.float64).reshape(-1)
        v = np.asarray(values, dtype=np.float64).reshape(t.shape[0], len(RAW_FIELDS))
        out = dict.fromkeys(FIELDS, math.nan)
        out["nvml_samples"] = float(t.shape[0])
        if t.shape[0] == 0:
            return np.array([out[f] for f in FIELDS])

        # Column-wise, NaN-aware and warning-free (an all-NaN column stays NaN).
        block = v[:, _NUMERIC_COLS]
        present = ~np.isnan(block)
        count = present.sum(axis=0)
        has = count > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            stats = {"min": np.where(present, block, np.inf).min(axis=0),
                     "mean": np.where(present, block, 0.0).sum(axis=0) / count,
                     "max": np.where(present, block, -np.inf).max(axis=0)}
        for stat, column_stats in stats.items():
            for name, ok, x in zip(_NUMERIC, has, column_stats, strict=True):
                if ok:
                    out[f"{name}_{stat}"] = float(x)
        limits = v[:, _LIMIT_COLS]
        lowest = np.where(np.isnan(limits), np.inf, limits).min(axis=0)
        for name, x in zip(_LIMITS.values(), lowest, strict=True):
            if np.isfinite(x):
                out[name] = float(x)

        mask_col = v[:, _COL["clocks_event_reasons"]]
        known = mask_col[~np.isnan(mask_col)].astype(np.uint64)
        if known.size:
            shares = ((known[:, None] & _REASON_BITS) != 0).mean(axis=0)
            for (name, _), share in zip(REASONS, shares, strict=True):
                out[f"reason_{name}_frac"] = float(share)

        start_t = self._last_t if not math.isnan(self._last_t) else float(t[0])
        span_s = float(t[-1]) - start_t
        out["nvml_window_s"] = span_s
        for raw, name, per_time in (("power_violation_ns", "power_violation_frac", True),
                                    ("thermal_violation_ns", "thermal_violation_frac", True),
                                    ("ecc_corrected_volatile", "ecc_corrected_delta", False),
                                    ("ecc_uncorrected_volatile", "ecc_uncorrected_delta", False)):
            col = v[:, _COL[raw]]
            ok = ~np.isnan(col)
            if not ok.any():
                self._last_counters.pop(raw, None)
                continue
            first, last = float(col[ok][0]), float(col[ok][-1])
            base = self._last_counters.get(raw, first)
            self._last_counters[raw] = last
            delta = last - base
            if delta < 0:  # counter reset (driver reload): no valid growth this window
                continue
            if per_time:
                if span_s > 0:
                    out[name] = min(delta / (span_s * 1e9), 1.0)
            else:
                out[name] = delta
        self._last_t = float(t[-1])
        return np.array([out[f] for f in FIELDS])


def aggregate_window(timestamps_s: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`FIELDS` vector of one stand-alone window (counters measured within it)."""
    return WindowAggregator()(timestamps_s, values)


def as_mapping(vector: Sequence[float]) -> dict[str, float]:
    """``{field: value}`` for a `FIELDS` vector, absent (NaN) values dropped."""
    return {f: float(x) for f, x in zip(FIELDS, vector, strict=True) if not math.isnan(float(x))}
