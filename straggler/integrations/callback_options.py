"""The Lightning callback's parameters, validated in one place (no Lightning needed to check them).

`straggler.integrations.lightning.StragglerDetectionCallback` takes NVRx's keyword arguments and
builds one `CallbackOptions`; a bad value raises ``ValueError`` naming it (`OptionTypeError`,
also a TypeError, for a value of the wrong type). ``ft_options`` goes through
`straggler.options.to_options`, so a bad FT option fails when the callback is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._checks import (
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_name,
    check_process_group,
    check_seconds,
)
from .._constants import FT_SECTIONS_MODES
from ..options import to_options
from ..reporting.decision import DEFAULT_PERF_THRESHOLD, Verdict
from ._common import DEFAULT_SYNC_TIMEOUT_S
from .ft.options import FTOptions

__all__ = ["CallbackOptions", "scores_to_print"]

DEFAULT_LOGGER_NAME = "nemo_logger.StragglerDetectionCallback"  # NVRx's
DEFAULT_SCORES_TO_PRINT = 5


def scores_to_print(num_gpu_perf_scores_to_print: Any,
                    num_gpu_perf_scores_to_log: Any = None) -> int:
    """The ranks to log per report; ``num_gpu_perf_scores_to_log`` is NVRx's other name for it."""
    num = check_int("num_gpu_perf_scores_to_print", num_gpu_perf_scores_to_print, 0)
    if num_gpu_perf_scores_to_log is None:
        return num
    alias = check_int("num_gpu_perf_scores_to_log", num_gpu_perf_scores_to_log, 0)
    if num_gpu_perf_scores_to_print not in (DEFAULT_SCORES_TO_PRINT, alias):
        raise ValueError(f"`num_gpu_perf_scores_to_log={alias!r}` and "
                         f"`num_gpu_perf_scores_to_print={num!r}` disagree; give one")
    return alias


@dataclass(frozen=True)
class CallbackOptions:
    """`StragglerDetectionCallback`'s parameters (its docstring says what each does)."""

    report_time_interval: float = 300.0
    calc_relative_gpu_perf: bool = True
    calc_individual_gpu_perf: bool = True
    num_gpu_perf_scores_to_print: int = DEFAULT_SCORES_TO_PRINT
    gpu_relative_perf_threshold: float = DEFAULT_PERF_THRESHOLD
    gpu_individual_perf_threshold: float = DEFAULT_PERF_THRESHOLD
    stop_if_detected: bool = False
    enable_ptl_logging: bool = False
    profiling_interval: int = 1
    logger_name: str | None = DEFAULT_LOGGER_NAME
    exit_code: int | None = 1
    node_name: str | None = None
    process_group: Any = None
    sync_timeout_s: float = DEFAULT_SYNC_TIMEOUT_S
    ft_sections: str = "auto"
    ft_options: FTOptions | Mapping[str, Any] | None = None
    """`FTOptions` once built (a dict of its fields is converted)."""
    ft_autoresume: bool = False
    verdict: str = Verdict.CONFIRMED.value

    def __post_init__(self) -> None:
        self._set("report_time_interval", check_seconds(
            "report_time_interval", self.report_time_interval, allow_zero=True))
        check_bool("calc_relative_gpu_perf", self.calc_relative_gpu_perf)
        check_bool("calc_individual_gpu_perf", self.calc_individual_gpu_perf)
        if not (self.calc_relative_gpu_perf or self.calc_individual_gpu_perf):
            raise ValueError("No straggler performance scores specified: "
                             "`calc_relative_gpu_perf=False` and `calc_individual_gpu_perf=False`;"
                             " set at least one to True")
        check_int("num_gpu_perf_scores_to_print", self.num_gpu_perf_scores_to_print, 0)
        self._set("gpu_relative_perf_threshold", check_fraction(
            "gpu_relative_perf_threshold", self.gpu_relative_perf_threshold, allow_zero=True))
        self._set("gpu_individual_perf_threshold", check_fraction(
            "gpu_individual_perf_threshold", self.gpu_individual_perf_threshold, allow_zero=True))
        check_bool("stop_if_detected", self.stop_if_detected)
        check_bool("enable_ptl_logging", self.enable_ptl_logging)
        check_int("profiling_interval", self.profiling_interval)
        if self.logger_name is not None and not isinstance(self.logger_name, str):
            raise ValueError(f"`logger_name={self.logger_name!r}` must be a string or None")
        code = self.exit_code
        if code is not None and (isinstance(code, bool) or not isinstance(code, int)
                                 or not 0 <= code <= 255):
            raise ValueError(f"`exit_code={code!r}` must be an integer in 0..255 or None")
        check_name("node_name", self.node_name, optional=True, printable=True)
        check_process_group("process_group", self.process_group)  # not at fit, failing open
        self._set("sync_timeout_s", check_seconds("sync_timeout_s", self.sync_timeout_s))
        check_choice("ft_sections", self.ft_sections, FT_SECTIONS_MODES)
        if self.ft_options is not None:  # checked now, not at the first fit
            self._set("ft_options", to_options(FTOptions, self.ft_options, "ft_options"))
        check_bool("ft_autoresume", self.ft_autoresume)
        check_choice("verdict", self.verdict, [v.value for v in Verdict])

    def _set(self, name: str, value: Any) -> None:
        """Store a normalized value (an int number of seconds becomes a float) on a frozen self."""
        object.__setattr__(self, name, value)

    @property
    def scores_to_compute(self) -> list[str]:
        """``Detector.initialize(scores_to_compute=...)`` for the GPU scores asked for."""
        return ((["relative_perf_scores"] if self.calc_relative_gpu_perf else [])
                + (["individual_perf_scores"] if self.calc_individual_gpu_perf else []))
