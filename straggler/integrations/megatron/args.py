"""Megatron-LM's straggler flags and ours: register them, and build a config from them."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from .config import StragglerDetectionConfig

__all__ = ["add_straggler_args", "config_from_args"]


def _arg_type(name: str, convert: Callable[[str], Any], ok: Callable[[Any], bool], what: str):
    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"`{name}={text!r}` must be {what}")
        return value
    parse.__name__ = name  # argparse names the type in some messages
    return parse


_positive_seconds = _arg_type("--straggler-report-interval", float,
                              lambda v: math.isfinite(v) and v > 0, "a positive number of seconds")
_timeout_seconds = _arg_type("--straggler-sync-timeout", float,
                             lambda v: math.isfinite(v) and v > 0, "a positive number of seconds")
_rel_threshold = _arg_type("--straggler-gpu-relative-threshold", float,
                           lambda v: 0.0 <= v <= 1.0, "a number between 0 and 1")
_indiv_threshold = _arg_type("--straggler-gpu-individual-threshold", float,
                             lambda v: 0.0 <= v <= 1.0, "a number between 0 and 1")
_port = _arg_type("--straggler-ctrlr-port", int, lambda v: 0 <= v <= 65535,
                  "an integer between 0 and 65535")
_minmax = _arg_type("--straggler-minmax-count", int, lambda v: v >= 1, "a positive integer")
_profiling = _arg_type("--straggler-profiling-interval", int, lambda v: v >= 1,
                       "a positive integer")
_num_print = _arg_type("--straggler-num-scores-to-print", int, lambda v: v >= 0,
                       "a non-negative integer")
_ctrlr_host, _logger_name, _node_name = (
    _arg_type(flag, str, lambda v: bool(v.strip()), "a non-empty string")
    for flag in ("--straggler-ctrlr-host", "--straggler-logger-name", "--straggler-node-name"))

_DEFAULTS = StragglerDetectionConfig()


def add_straggler_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the straggler flags in a ``straggler`` argument group; returns ``parser``.

    Megatron-LM's flags keep their names, meaning and defaults; ours start with ``--straggler-``.
    Bad values make the parser exit with a message naming the flag and the value.
    """
    d = _DEFAULTS
    g = parser.add_argument_group("straggler", "straggler detection (straggler package)")
    g.add_argument("--log-straggler", action="store_true",
                   help="If set, tracks and logs straggler per GPU.")
    g.add_argument("--straggler-ctrlr-port", type=_port, default=d.straggler_ctrlr_port,
                   help="Port of the HTTP controller that turns detection on/off and changes "
                        "thresholds at run time (0: any free port). Default: %(default)s.")
    g.add_argument("--straggler-minmax-count", type=_minmax, default=d.straggler_minmax_count,
                   help="Number of ranks to report with the lowest and highest scores. "
                        "Default: %(default)s.")
    g.add_argument("--disable-straggler-on-startup", action="store_true",
                   help="Start with detection off; turn it on through the controller.")
    g.add_argument("--straggler-ctrlr-host", type=_ctrlr_host, default=d.straggler_ctrlr_host,
                   help="Address the controller listens on. Default: %(default)s (this machine "
                        "only); another address exposes it to the network.")
    g.add_argument("--straggler-disable-ctrlr", action="store_true",
                   help="Do not start the HTTP controller.")
    g.add_argument("--straggler-report-interval", type=_positive_seconds,
                   default=d.report_time_interval,
                   help="Seconds between straggler reports. Default: %(default)s.")
    g.add_argument("--straggler-scores", choices=("all", "relative", "individual"), default="all",
                   help="Scores to compute: relative (vs the other ranks), individual (vs the "
                        "rank's own past), or all. Default: %(default)s.")
    g.add_argument("--straggler-gpu-relative-threshold", type=_rel_threshold,
                   default=d.gpu_relative_perf_threshold,
                   help="Flag a rank whose relative score is below this. Default: %(default)s.")
    g.add_argument("--straggler-gpu-individual-threshold", type=_indiv_threshold,
                   default=d.gpu_individual_perf_threshold,
                   help="Flag a rank whose individual score is below this. Default: %(default)s.")
    g.add_argument("--straggler-stop-if-detected", action="store_true",
                   help="Stop training (on every rank) when a straggler is flagged.")
    g.add_argument("--straggler-profiling-interval", type=_profiling,
                   default=d.profiling_interval,
                   help="Time every N-th step only. Default: %(default)s.")
    g.add_argument("--straggler-num-scores-to-print", type=_num_print,
                   default=d.num_gpu_perf_scores_to_print,
                   help="Worst and best ranks listed with their scores at each report (0: list "
                        "only with stragglers). Default: %(default)s.")
    g.add_argument("--straggler-disable-logging", action="store_true",
                   help="Do not log min/median/max score lines.")
    g.add_argument("--straggler-logger-name", type=_logger_name, default=d.logger_name,
                   help="Logger for the report lines. Default: %(default)s.")
    g.add_argument("--straggler-node-name", type=_node_name, default=None,
                   help="Name of this node in reports. Default: the host name.")
    g.add_argument("--straggler-sync-timeout", type=_timeout_seconds, default=d.sync_timeout_s,
                   help="Longest wait, in seconds, in any of the detector's collectives "
                        "(sync points, reports). Default: %(default)s.")
    g.add_argument("--straggler-verdict", choices=("confirmed", "single_report"),
                   default=d.verdict,
                   help="Act (stop) on the policy's confirmed stragglers, or on NVRx's "
                        "single-report rule. Default: %(default)s.")
    return parser


def config_from_args(args: argparse.Namespace) -> StragglerDetectionConfig:
    """Build the config from flags parsed by a parser that went through :func:`add_straggler_args`.

    Flags absent from ``args`` take their defaults; values are validated (``ValueError``).
    """
    d = _DEFAULTS

    def get(name: str, default: Any) -> Any:
        return getattr(args, name, default)

    scores = get("straggler_scores", "all")
    if scores not in ("all", "relative", "individual"):
        raise ValueError(f"`straggler_scores={scores!r}` must be 'all', 'relative' or "
                         "'individual'")
    return StragglerDetectionConfig(
        enabled=get("log_straggler", False),
        report_time_interval=get("straggler_report_interval", d.report_time_interval),
        calc_relative_gpu_perf=scores in ("all", "relative"),
        calc_individual_gpu_perf=scores in ("all", "individual"),
        num_gpu_perf_scores_to_print=get("straggler_num_scores_to_print",
                                         d.num_gpu_perf_scores_to_print),
        gpu_relative_perf_threshold=get("straggler_gpu_relative_threshold",
                                        d.gpu_relative_perf_threshold),
        gpu_individual_perf_threshold=get("straggler_gpu_individual_threshold",
                                          d.gpu_individual_perf_threshold),
        stop_if_detected=get("straggler_stop_if_detected", False),
        enable_logging=not get("straggler_disable_logging", False),
        profiling_interval=get("straggler_profiling_interval", d.profiling_interval),
        logger_name=get("straggler_logger_name", d.logger_name),
        straggler_ctrlr_port=get("straggler_ctrlr_port", d.straggler_ctrlr_port),
        straggler_minmax_count=get("straggler_minmax_count", d.straggler_minmax_count),
        disable_straggler_on_startup=get("disable_straggler_on_startup", False),
        straggler_ctrlr_host=get("straggler_ctrlr_host", d.straggler_ctrlr_host),
        enable_controller=not get("straggler_disable_ctrlr", False),
        node_name=get("straggler_node_name", None),
        sync_timeout_s=get("straggler_sync_timeout", d.sync_timeout_s),
        verdict=get("straggler_verdict", d.verdict),
    )
