"""`DetectorOptions`: every argument of ``Detector.initialize``, checked once.

Built before anything else, so bad input raises a ValueError naming the parameter and echoing
the value (`` `profiling_interval=0` must be a positive integer ``) and leaves nothing behind.
The values are normalised where a later part needs one form: `scores_to_compute` a list,
`node_name` a string, `telemetry` a `TelemetryOptions`, `ft_options` an `FTOptions`, `policy`
the persistence policy itself (or None).
"""

from __future__ import annotations

import dataclasses
import socket
from typing import Any

from ._checks import check_bool, check_choice, check_int, check_name, check_seconds
from ._constants import FT_SECTIONS_MODES
from ._options import check_or_create_options

__all__ = ["DetectorOptions", "DEFAULT_CAPACITY", "DEFAULT_MAX_NAMES",
           "DEFAULT_NAME_TTL_REPORTS", "DEFAULT_GPU_SAMPLE_INTERVAL"]

DEFAULT_CAPACITY = 8 * 1024  # samples kept per section / timer, as NVRx
DEFAULT_MAX_NAMES = 2048  # live section names; more are not timed until old ones expire
DEFAULT_NAME_TTL_REPORTS = 2  # a section unused for this many reports is forgotten
# Without per-op capture and with profiling_interval=1, one profiled entry in this many is
# timed on the GPU (events and the busy-time observer cost the host ~10 µs and the GPU a bubble
# per timed op). A profiling_interval above 1 is the user's own rate: then every profiled entry
# is GPU-timed, as in NVRx (`DetectorOptions.gpu_interval`).
DEFAULT_GPU_SAMPLE_INTERVAL = 10


@dataclasses.dataclass(frozen=True)
class DetectorOptions:
    """The arguments of ``Detector.initialize`` (same names and defaults), validated when built.

    See docs/detector.md, "Options", for what each one does. Building it creates nothing (no
    process group, file, thread or GPU state); `DetectorCore` builds from it.
    """

    scores_to_compute: Any = "all"
    gather_on_rank0: bool = True
    profiling_interval: int = 1
    report_time_interval: float = 60
    node_name: Any = None
    process_group: Any = None
    per_op_capture: bool = False
    comm_timeout_s: float = 120.0
    ft_sections: str = "auto"
    timer_capacity: int = DEFAULT_CAPACITY
    report_options: Any = None
    ft_options: Any = None
    telemetry: Any = True
    policy: Any = True
    roles: Any = None
    report_log: Any = None
    prometheus: Any = None
    max_names: int = DEFAULT_MAX_NAMES
    name_ttl_reports: int = DEFAULT_NAME_TTL_REPORTS
    gpu_sample_interval: int | None = None

    def __post_init__(self) -> None:
        from .analysis.policy import make_policy
        from .integrations.ft.options import FTOptions
        from .reporting.generator import check_scores_to_compute
        from .telemetry.options import telemetry_options

        def put(name: str, value: Any) -> None:  # normalise a field of this frozen object
            object.__setattr__(self, name, value)

        put("scores_to_compute",
            check_scores_to_compute(self.scores_to_compute, allow_name=False))
        check_bool("gather_on_rank0", self.gather_on_rank0)
        check_int("profiling_interval", self.profiling_interval)
        put("report_time_interval", check_seconds("report_time_interval",
                                                  self.report_time_interval, allow_zero=True))
        put("node_name", check_name("node_name", self.node_name, optional=True)
            or socket.gethostname())
        check_bool("per_op_capture", self.per_op_capture)
        if self.gpu_sample_interval is not None:
            check_int("gpu_sample_interval", self.gpu_sample_interval)
        put("comm_timeout_s", check_seconds("comm_timeout_s", self.comm_timeout_s))
        check_choice("ft_sections", self.ft_sections, FT_SECTIONS_MODES)
        put("ft_options", check_or_create_options(FTOptions, self.ft_options, "ft_options"))
        check_int("timer_capacity", self.timer_capacity)
        check_int("max_names", self.max_names)
        check_int("name_ttl_reports", self.name_ttl_reports)
        if self.report_options is not None and not isinstance(self.report_options, dict):
            raise ValueError(f"`report_options={self.report_options!r}` must be a dict or None")
        put("report_options", dict(self.report_options or {}))
        # The persistence policy behind Report.confirmed (docs/policy.md); None: no policy.
        put("policy", make_policy(self.policy, self.roles))
        put("telemetry", telemetry_options(self.telemetry))  # NVML, causes, probe
        group = self.process_group
        if group is not None:
            import torch.distributed as dist

            if not isinstance(group, dist.ProcessGroup):
                raise ValueError(f"`process_group={group!r}` must be a "
                                 "torch.distributed.ProcessGroup or None")

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
