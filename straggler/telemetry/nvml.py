"""GPU telemetry: NVML samples of this rank's GPU, reduced to one fixed-length vector per report.

A C++ thread (`straggler._core.NvmlSampler`) samples the GPU every ``period_s`` seconds, off the
training thread. At each report `NvmlTelemetry.sample` drains the samples of the window and
`aggregate_window` reduces them to `FIELDS`: min / mean / max of the numeric values, the share of
samples with each clocks-event (throttle) reason, and the growth of the cumulative counters
(violation time as a share of the window, ECC errors). The vector rides in the report's gathered
float64 tensor (`ReportGenerator(telemetry_fields=FIELDS)`), so telemetry costs no extra
collective; NaN means "absent" (not supported by this GPU, or no NVML).

The GPU is the CUDA device of this process, found in NVML by its PCI bus id (CUDA ordinals,
NVML indices and ``CUDA_VISIBLE_DEVICES`` disagree; the bus id does not). NVML is loaded from
``$STRAGGLER_LIBNVML`` or ``libnvidia-ml.so.1``: one NVML code path per job (pynvml is not used).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_bool, check_int, check_seconds

__all__ = ["DEFAULT_PERIOD_S", "FIELDS", "GpuIdentity", "NvmlTelemetry", "REASONS",
           "RAW_FIELDS", "TelemetryOptions", "WindowAggregator", "aggregate_window", "as_mapping",
           "telemetry_options"]

log = logging.getLogger("straggler")

# Default sampling period. One sample is ~18 NVML calls; the only hard per-call figure we have is
# ~0.36 ms (GetPowerUsage, K40m; see benchmarks/README.md), i.e. <= ~7 ms per sample, which at 1 s
# is <= 0.7% of one CPU core on the sampler thread and nothing on the training thread. Faster
# sampling buys little: NVML's utilization counter covers the last 1/6-1 s and power is a 1 s
# average on Ampere and newer, and the violation counters are cumulative, so throttling between
# samples is still counted. 60 samples per default 60 s report window resolve throttle shares to
# ~2%.
DEFAULT_PERIOD_S = 1.0

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


@dataclass(frozen=True)
class GpuIdentity:
    """Which physical GPU a rank used, as NVML names it ("" where unknown)."""

    name: str = ""
    uuid: str = ""
    serial: str = ""
    pci_bus_id: str = ""
    driver_version: str = ""

    def __str__(self) -> str:
        parts = [p for p in (self.uuid, self.serial and f"serial {self.serial}",
                             self.pci_bus_id and f"PCI {self.pci_bus_id}",
                             self.driver_version and f"driver {self.driver_version}") if p]
        head = self.name or "GPU"
        return f"{head} ({', '.join(parts)})" if parts else head

    @property
    def known(self) -> bool:
        """Whether NVML told us anything about the board."""
        return bool(self.uuid or self.serial or self.pci_bus_id or self.name)


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
        for stat, values in stats.items():
            for name, ok, x in zip(_NUMERIC, has, values):
                if ok:
                    out[f"{name}_{stat}"] = float(x)
        limits = v[:, _LIMIT_COLS]
        lowest = np.where(np.isnan(limits), np.inf, limits).min(axis=0)
        for name, x in zip(_LIMITS.values(), lowest):
            if np.isfinite(x):
                out[name] = float(x)

        mask_col = v[:, _COL["clocks_event_reasons"]]
        known = mask_col[~np.isnan(mask_col)].astype(np.uint64)
        if known.size:
            shares = ((known[:, None] & _REASON_BITS) != 0).mean(axis=0)
            for (name, _), share in zip(REASONS, shares):
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
    return {f: float(x) for f, x in zip(FIELDS, vector) if not math.isnan(float(x))}


@dataclass(frozen=True)
class TelemetryOptions:
    """`Detector.initialize(telemetry=...)`: GPU telemetry, causes and the probe on suspects.

    ``telemetry=True`` means ``TelemetryOptions()``, ``False`` turns NVML sampling off (causes
    are still given, from scores alone).
    """

    enabled: bool = True
    """Sample NVML in a background thread and send the per-report vector."""
    period_s: float = DEFAULT_PERIOD_S
    """Sampling period in seconds."""
    probe_suspects: bool = False
    """After a report whose flagged rank has a slow GPU and no telemetry explanation, run the
    health probe on every rank (a few ms) and refine that rank's cause. Costs one all_reduce of
    one float per report."""
    rules: Any = None
    """`straggler.analysis.causes.CauseRules` (None: the defaults)."""

    def __post_init__(self) -> None:
        check_bool("enabled", self.enabled)
        check_seconds("period_s", self.period_s)
        check_bool("probe_suspects", self.probe_suspects)
        from ..analysis.causes import CauseRules

        if self.rules is not None and not isinstance(self.rules, CauseRules):
            raise ValueError(f"`rules={self.rules!r}` must be a "
                             "straggler.analysis.causes.CauseRules or None")


def telemetry_options(value: Any) -> TelemetryOptions:
    """`TelemetryOptions` from ``Detector.initialize(telemetry=value)``; ValueError if bad."""
    if isinstance(value, TelemetryOptions):
        return value
    if isinstance(value, bool):
        return TelemetryOptions(enabled=value)
    raise ValueError(f"`telemetry={value!r}` must be True, False or a "
                     "straggler.telemetry.nvml.TelemetryOptions")


class NvmlTelemetry:
    """The detector's telemetry provider: NVML sampled in the background, one vector per report.

    Never raises after construction argument checks: without NVML, without a CUDA device, or
    after NVML failed for good, `sample` returns NaNs (logged once) and detection goes on.

    Args:
        device: CUDA ordinal of this rank's GPU (default: torch's current device, else 0).
        period_s: sampling period in seconds (`DEFAULT_PERIOD_S`).
        capacity: samples kept between two reports (oldest dropped beyond it).
        max_consecutive_failures: failing samples in a row after which sampling stops.
    """

    fields: tuple[str, ...] = FIELDS

    def __init__(self, device: int | None = None, period_s: float = DEFAULT_PERIOD_S, *,
                 capacity: int = 4096, max_consecutive_failures: int = 3) -> None:
        self.period_s = check_seconds("period_s", period_s)
        check_int("capacity", capacity)
        check_int("max_consecutive_failures", max_consecutive_failures)
        if device is not None and (isinstance(device, bool) or not isinstance(device, int)
                                   or device < 0):
            raise ValueError(f"`device={device!r}` must be a CUDA ordinal (int >= 0) or None")
        self.identity = GpuIdentity()
        self.status = "not started"
        self._sampler: Any = None
        self._aggregate = WindowAggregator()
        self._failure_logged = False
        # With device=None the GPU follows torch's current device, which a job may set after
        # Detector.initialize(): sample() moves the sampler when it changed.
        self._follow_torch = device is None
        self._device = _current_cuda_device() if device is None else device
        self._options = (capacity, max_consecutive_failures)
        self._start(self._device, capacity, max_consecutive_failures)

    # -- lifetime ------------------------------------------------------------------------------
    def _start(self, device: int, capacity: int, max_failures: int) -> None:
        try:
            from .. import _core

            available, why = _core.nvml_status()
            if not available:
                self.status = why
                log.info("straggler: no GPU telemetry: %s", why)
                return
            try:
                bus_id = _core.cuda_device_pci_bus_id(device)
            except Exception as exc:  # noqa: BLE001 - no CUDA device: no GPU to sample
                self.status = f"no CUDA device {device}: {exc}"
                log.info("straggler: no GPU telemetry: %s", self.status)
                return
            sampler = _core.NvmlSampler(bus_id, self.period_s, capacity, max_failures)
            self.identity = GpuIdentity(**{k: str(v) for k, v in sampler.identity.items()})
            sampler.start()
            self._sampler = sampler
            self.status = "sampling"
        except Exception as exc:  # noqa: BLE001 - fail open: telemetry is optional
            self.status = f"{type(exc).__name__}: {exc}"
            log.warning("straggler: GPU telemetry is off: %s", self.status)

    def close(self) -> None:
        """Stop and join the sampler thread. Idempotent."""
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.stop()
            self.status = "closed"

    @property
    def running(self) -> bool:
        """Whether the sampler thread is alive."""
        return self._sampler is not None and bool(self._sampler.running)

    @property
    def unsupported(self) -> Mapping[str, str]:
        """Raw fields this GPU does not offer, with NVML's answer."""
        return dict(self._sampler.unsupported) if self._sampler is not None else {}

    # -- per report ----------------------------------------------------------------------------
    def sample(self) -> np.ndarray:
        """The `FIELDS` vector of the window since the previous call (NaN: absent)."""
        if self._follow_torch and _current_cuda_device() != self._device:
            # The job picked its GPU after we started: what we sampled was another board.
            self.close()
            self._device = _current_cuda_device()
            self._aggregate = WindowAggregator()
            self._start(self._device, *self._options)
            return np.full(len(FIELDS), np.nan)
        sampler = self._sampler
        if sampler is None:
            return np.full(len(FIELDS), np.nan)
        timestamps, values, dropped = sampler.drain()
        error = sampler.error
        if error and not self._failure_logged:
            self._failure_logged = True
            self.status = error
            log.warning("straggler: %s; reports carry no GPU telemetry from this rank from now "
                        "on, straggler detection goes on", error)
        if dropped:
            log.debug("straggler: %d NVML samples dropped (buffer full)", dropped)
        return self._aggregate(timestamps, values)


def _current_cuda_device() -> int:
    try:
        import torch

        if torch.cuda.is_available():
            return int(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - torch without CUDA: the driver's device 0
        pass
    return 0
