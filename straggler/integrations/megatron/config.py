"""Straggler detection settings: Megatron-Bridge's config fields, Megatron-LM's, and ours."""

from __future__ import annotations

from dataclasses import dataclass

from ..._checks import (
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_name,
    check_seconds,
)
from ...reporting.decision import DEFAULT_PERF_THRESHOLD, Verdict
from .. import _common
from ..controller import DEFAULT_HOST

__all__ = ["StragglerDetectionConfig", "NVRxStragglerDetectionConfig"]


@dataclass
class StragglerDetectionConfig:
    """Straggler detection settings: Megatron-Bridge's ``NVRxStragglerDetectionConfig`` and more.

    Bridge fields, same names and defaults: ``enabled``, ``report_time_interval`` (s),
    ``calc_relative_gpu_perf``, ``calc_individual_gpu_perf``, ``num_gpu_perf_scores_to_print``
    (0: print scores only with stragglers), ``gpu_relative_perf_threshold``,
    ``gpu_individual_perf_threshold`` (a rank is flagged strictly below), ``stop_if_detected``,
    ``enable_logging`` (min/median/max score lines), ``profiling_interval``, ``logger_name``.

    Megatron-LM fields: ``straggler_ctrlr_port`` (HTTP control port; 0 picks a free one),
    ``straggler_minmax_count`` (ranks listed at each end of the Megatron-style line),
    ``disable_straggler_on_startup`` (start switched off; turn on through the controller).
    ``enabled`` plays ``--log-straggler``'s role.

    Ours: ``straggler_ctrlr_host`` (the controller's address, loopback unless you say so),
    ``enable_controller``, ``node_name`` (defaults to the host name), ``sync_timeout_s`` (longest
    wait in any of the detector's collectives, sync points and reports: its ``comm_timeout_s``),
    ``verdict`` (``"confirmed"``: act on the policy's confirmed stragglers; ``"single_report"``:
    NVRx's rule, a score below a threshold in one report).

    Values are checked when the object is built and again by :meth:`finalize`.
    """

    enabled: bool = False
    report_time_interval: float = 300.0
    calc_relative_gpu_perf: bool = True
    calc_individual_gpu_perf: bool = True
    num_gpu_perf_scores_to_print: int = 5
    gpu_relative_perf_threshold: float = DEFAULT_PERF_THRESHOLD
    gpu_individual_perf_threshold: float = DEFAULT_PERF_THRESHOLD
    stop_if_detected: bool = False
    enable_logging: bool = True
    profiling_interval: int = 1
    logger_name: str = "megatron.bridge.NVRxStragglerDetection"
    straggler_ctrlr_port: int = 65535
    straggler_minmax_count: int = 1
    disable_straggler_on_startup: bool = False
    straggler_ctrlr_host: str = DEFAULT_HOST
    enable_controller: bool = True
    node_name: str | None = None
    sync_timeout_s: float = _common.DEFAULT_SYNC_TIMEOUT_S
    verdict: str = Verdict.CONFIRMED.value

    def __post_init__(self) -> None:
        self.finalize()

    def finalize(self) -> None:
        """Check every field; raise ``ValueError`` naming the first bad one and its value."""
        for name in ("enabled", "calc_relative_gpu_perf", "calc_individual_gpu_perf",
                     "stop_if_detected", "enable_logging", "disable_straggler_on_startup",
                     "enable_controller"):
            check_bool(name, getattr(self, name))
        if not (self.calc_relative_gpu_perf or self.calc_individual_gpu_perf):
            raise ValueError("`calc_relative_gpu_perf=False` and `calc_individual_gpu_perf=False`:"
                             " at least one kind of score must be computed")
        for name in ("report_time_interval", "sync_timeout_s"):
            check_seconds(name, getattr(self, name))
        for name in ("gpu_relative_perf_threshold", "gpu_individual_perf_threshold"):
            check_fraction(name, getattr(self, name), allow_zero=True)
        for name, low in (("num_gpu_perf_scores_to_print", 0), ("profiling_interval", 1),
                          ("straggler_minmax_count", 1)):
            check_int(name, getattr(self, name), low)
        check_int("straggler_ctrlr_port", self.straggler_ctrlr_port, 0, high=65535)
        for name in ("logger_name", "straggler_ctrlr_host"):
            check_name(name, getattr(self, name), strip=True)
        check_name("node_name", self.node_name, optional=True, strip=True, printable=True)
        check_choice("verdict", self.verdict, [v.value for v in Verdict])

    @property
    def scores_to_compute(self) -> list[str]:
        """The ``scores_to_compute`` list for ``Detector.initialize``."""
        return (["relative_perf_scores"] if self.calc_relative_gpu_perf else []) + \
               (["individual_perf_scores"] if self.calc_individual_gpu_perf else [])


#: Megatron-Bridge's name for the same config.
NVRxStragglerDetectionConfig = StragglerDetectionConfig
