"""GPU telemetry: NVML samples of this rank's GPU, one `FIELDS` vector per report.

A C++ thread (`straggler._core.NvmlSampler`) samples the GPU every ``period_s`` seconds, off the
training thread. At each report `NvmlTelemetry.sample` drains the samples of the window and
`straggler.telemetry.window.WindowAggregator` reduces them to `FIELDS`.

The GPU is the CUDA device of this process, found in NVML by its PCI bus id (CUDA ordinals,
NVML indices and ``CUDA_VISIBLE_DEVICES`` disagree; the bus id does not). NVML is loaded from
``$STRAGGLER_LIBNVML`` or ``libnvidia-ml.so.1``: one NVML code path per job (pynvml is not used).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import check_int, check_seconds
from .device import current_cuda_device
from .window import FIELDS, WindowAggregator

__all__ = ["DEFAULT_PERIOD_S", "GpuIdentity", "NvmlTelemetry"]

log = logging.getLogger("straggler")

# Default sampling period. One sample is ~18 NVML calls; the only hard per-call figure we have is
# ~0.36 ms (GetPowerUsage, K40m; see benchmarks/README.md), i.e. <= ~7 ms per sample, which at 1 s
# is <= 0.7% of one CPU core on the sampler thread and nothing on the training thread. Faster
# sampling buys little: NVML's utilization counter covers the last 1/6-1 s and power is a 1 s
# average on Ampere and newer, and the violation counters are cumulative, so throttling between
# samples is still counted. 60 samples per default 60 s report window resolve throttle shares to
# ~2%.
DEFAULT_PERIOD_S = 1.0


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


# A window with no sample of its own carries the latest one when it is at most this many
# periods old (one period, and scheduling slack).
_CARRY_PERIODS = 1.5


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
        self._latest: tuple[np.ndarray, np.ndarray] | None = None  # the newest sample drained
        self._attempts = 0  # the sampler's samples_taken at the last drain
        self._failure_logged = False
        # With device=None the GPU follows torch's current device, which a job may set after
        # Detector.initialize(): sample() moves the sampler when it changed.
        self._follow_torch = device is None
        self._device = current_cuda_device() if device is None else device
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
        if self._follow_torch and current_cuda_device() != self._device:
            # The job picked its GPU after we started: what we sampled was another board.
            self.close()
            self._device = current_cuda_device()
            self._aggregate = WindowAggregator()
            self._latest, self._attempts = None, 0
            self._start(self._device, *self._options)
            return np.full(len(FIELDS), np.nan)
        sampler = self._sampler
        if sampler is None:
            return np.full(len(FIELDS), np.nan)
        attempts = sampler.samples_taken  # before the drain: none can be lost in between
        timestamps, values, dropped = sampler.drain()
        error = sampler.error
        if len(timestamps):
            self._latest = (timestamps[-1:], values[-1:])
        elif (self._latest is not None and attempts == self._attempts and not error
              and time.monotonic() - float(self._latest[0][0]) <= _CARRY_PERIODS * self.period_s):
            # A window shorter than the sampling period (an early report at a short interval):
            # no sample was attempted in it and the latest one is recent: it stands in for the
            # window. A window whose samples failed gets none, nor one after failing samples
            # (backing off, the latest good one is older) or after NVML failed for good. Its
            # counters add nothing (a window of 0 s): nvml_window_s is 0. (The samples' stamps
            # are steady_clock seconds: CLOCK_MONOTONIC, as time.monotonic.)
            timestamps, values = self._latest
        self._attempts = attempts
        if error and not self._failure_logged:
            self._failure_logged = True
            self.status = error
            log.warning("straggler: %s; reports carry no GPU telemetry from this rank from now "
                        "on, straggler detection goes on", error)
        if dropped:
            log.debug("straggler: %d NVML samples dropped (buffer full)", dropped)
        return self._aggregate(timestamps, values)
