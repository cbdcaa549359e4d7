"""`DetectorOptions`: every argument of ``Detector.initialize``, checked once.

Built before anything else, so bad input raises a ValueError naming the parameter and echoing
the value (`` `profiling_interval=0` must be a positive integer ``; `OptionTypeError`, also a
TypeError, for a value of the wrong type) and leaves nothing behind. The values are normalised
where a later part needs one form: `scores_to_compute` a list, `node_name` a string; each
option object (`telemetry`, `ft_options`, `report_log`, `prometheus`, the hang settings,
`policy`'s config) comes from `straggler.options.to_options`, the one conversion, which also
loads their types (lazily: `from straggler import Detector` stays free of torch).
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from . import options
from ._checks import (
    check_bool,
    check_choice,
    check_int,
    check_name,
    check_process_group,
    check_scores_to_compute,
    check_seconds,
)
from ._constants import FT_SECTIONS_MODES, HANG_ACTIONS
from .analysis.policy import StragglerPolicy, make_policy

if TYPE_CHECKING:
    import os

    from torch.distributed import ProcessGroup

    from .options import (
        FTOptions,
        HangOptions,
        PolicyConfig,
        PrometheusOptions,
        ReportLogOptions,
        TelemetryOptions,
    )

__all__ = ["DetectorOptions", "ReportOptions", "DEFAULT_CAPACITY", "MAX_CAPACITY",
           "DEFAULT_MAX_NAMES", "DEFAULT_NAME_TTL_REPORTS", "DEFAULT_GPU_SAMPLE_INTERVAL"]

DEFAULT_CAPACITY = 8 * 1024  # samples kept per section / timer, as NVRx
# The timing engine's ring limit (csrc/timing/timer_engine.cpp, kMaxCapacity): checked here so
# that a larger value fails in initialize() instead of costing the GPU timers later.
MAX_CAPACITY = 1 << 24
DEFAULT_MAX_NAMES = 2048  # live section names; more are not timed until old ones expire
DEFAULT_NAME_TTL_REPORTS = 2  # a section unused for this many reports is forgotten
# Without per-op capture and with profiling_interval=1, one profiled entry in this many is
# timed on the GPU (events and the busy-time observer cost the host ~10 µs and the GPU a bubble
# per timed op). A profiling_interval above 1 is the user's own rate: then every profiled entry
# is GPU-timed, as in NVRx (`DetectorOptions.gpu_interval`).
DEFAULT_GPU_SAMPLE_INTERVAL = 10


class ReportOptions(TypedDict, total=False):
    """``initialize(report_options=...)``: tunables of the report generator (docs/scores.md)."""

    relative_reference: str
    individual_window: int
    individual_support: int
    communication_markers: Iterable[str]


@dataclasses.dataclass(frozen=True, init=False)
class DetectorOptions:
    """The arguments of ``Detector.initialize`` (same names and defaults), validated when built.

    See docs/detector.md, "Options", for what each one does. Building it creates nothing (no
    process group, file, thread or GPU state); `DetectorCore` builds from it. The constructor
    takes what ``initialize`` takes; the fields hold the normalised values (their types below).
    """

    scores_to_compute: list[str]
    gather_on_rank0: bool
    profiling_interval: int
    report_time_interval: float
    node_name: str
    process_group: ProcessGroup | None
    per_op_capture: bool
    comm_timeout_s: float
    ft_sections: str
    timer_capacity: int
    report_options: ReportOptions
    ft_options: FTOptions
    telemetry: TelemetryOptions
    policy: StragglerPolicy | None
    """The persistence policy behind Report.confirmed (docs/policy.md); None: no policy."""
    roles: Mapping[int, Hashable] | None
    report_log: ReportLogOptions | None
    """None: off (the environment was read when the options were built)."""
    prometheus: PrometheusOptions | None
    """None: off (the environment was read when the options were built)."""
    max_names: int
    name_ttl_reports: int
    gpu_sample_interval: int | None
    """None: the default rate (`gpu_interval`)."""
    collective_waits: bool
    hang_timeout_s: float | str | HangOptions | Mapping[str, object] | None
    """As given ("auto", seconds, None/False/0/"off", or the settings); `hang` holds what it
    means."""
    hang_action: str
    hang: HangOptions | None
    """Hang detection's settings (docs/hang.md); None: off."""

    def __init__(self, scores_to_compute: str | Sequence[str] = "all",
                 gather_on_rank0: bool = True, profiling_interval: int = 1,
                 report_time_interval: float = 60, node_name: str | None = None,
                 process_group: ProcessGroup | None = None, *, per_op_capture: bool = False,
                 comm_timeout_s: float = 120.0, ft_sections: str = "auto",
                 timer_capacity: int = DEFAULT_CAPACITY,
                 report_options: ReportOptions | None = None,
                 ft_options: FTOptions | Mapping[str, object] | None = None,
                 telemetry: bool | TelemetryOptions | Mapping[str, object] | None = True,
                 policy: PolicyConfig | StragglerPolicy | Mapping[str, object] | bool | None
                 = True,
                 roles: Mapping[int, Hashable] | None = None,
                 report_log: str | os.PathLike[str] | ReportLogOptions | Mapping[str, object]
                 | bool | None = None,
                 prometheus: int | PrometheusOptions | Mapping[str, object] | bool | None = None,
                 max_names: int = DEFAULT_MAX_NAMES,
                 name_ttl_reports: int = DEFAULT_NAME_TTL_REPORTS,
                 gpu_sample_interval: int | None = None,
                 collective_waits: bool = True,
                 hang_timeout_s: float | str | HangOptions | Mapping[str, object] | None = "auto",
                 hang_action: str = "none") -> None:
        def put(name: str, value: object) -> None:  # a field of this frozen object
            object.__setattr__(self, name, value)

        put("scores_to_compute", check_scores_to_compute(scores_to_compute, allow_name=False))
        put("gather_on_rank0", check_bool("gather_on_rank0", gather_on_rank0))
        put("profiling_interval", check_int("profiling_interval", profiling_interval))
        put("report_time_interval", check_seconds("report_time_interval", report_time_interval,
                                                  allow_zero=True))
        put("node_name", check_name("node_name", node_name, optional=True, printable=True)
            or socket.gethostname())
        put("per_op_capture", check_bool("per_op_capture", per_op_capture))
        put("collective_waits", check_bool("collective_waits", collective_waits))
        put("gpu_sample_interval", None if gpu_sample_interval is None
            else check_int("gpu_sample_interval", gpu_sample_interval))
        put("comm_timeout_s", check_seconds("comm_timeout_s", comm_timeout_s))
        put("ft_sections", check_choice("ft_sections", ft_sections, FT_SECTIONS_MODES))
        put("timer_capacity", check_int("timer_capacity", timer_capacity, high=MAX_CAPACITY))
        put("max_names", check_int("max_names", max_names))
        put("name_ttl_reports", check_int("name_ttl_reports", name_ttl_reports))
        put("roles", roles)
        put("policy", make_policy(policy, roles, self.report_time_interval))
        # The option objects, through the one conversion (straggler/options.py). None from
        # it means off; the sinks and the hang timeout read the environment now.
        to = options.to_options
        put("report_options", to(ReportOptions, report_options, "report_options"))
        put("ft_options", to(options.FTOptions, ft_options, "ft_options"))
        put("telemetry", to(options.TelemetryOptions, telemetry, "telemetry"))
        put("report_log", to(options.ReportLogOptions, report_log, "report_log"))
        put("prometheus", to(options.PrometheusOptions, prometheus, "prometheus"))
        put("hang_action", check_choice("hang_action", hang_action, HANG_ACTIONS))
        put("hang", to(options.HangOptions, hang_timeout_s, "hang_timeout_s", action=hang_action))
        put("hang_timeout_s", hang_timeout_s)
        put("process_group", check_process_group("process_group", process_group))

    @property
    def gpu_interval(self) -> int:
        """Every n-th profiled GPU entry is GPU-timed: 1 with per-op capture (it needs every op);
        else `gpu_sample_interval`, by default `DEFAULT_GPU_SAMPLE_INTERVAL` with
        ``profiling_interval=1`` and 1 (every profiled entry, as NVRx) with a larger one."""
        if self.per_op_capture:
            return 1
        if self.gpu_sample_interval is not None:
            return self.gpu_sample_interval
        return DEFAULT_GPU_SAMPLE_INTERVAL if self.profiling_interval == 1 else 1

    @property
    def agree_by_comm(self) -> bool:
        """Whether reports communicate, so ranks must agree on the report iteration: the scores'
        exchange, or the annotator's probe flag (all_reduce) with probe_suspects."""
        return ("relative_perf_scores" in self.scores_to_compute or self.gather_on_rank0
                or self.telemetry.probe_suspects)
