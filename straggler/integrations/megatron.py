"""Megatron-style integration: config, command-line flags and a manager for hand-written loops.

- :class:`StragglerDetectionConfig` has Megatron-Bridge's ``NVRxStragglerDetectionConfig``
  fields and defaults (and validation), Megatron-LM's four straggler settings, and ours.
- :func:`add_straggler_args` registers Megatron-LM's flags (``--log-straggler``,
  ``--straggler-ctrlr-port``, ``--straggler-minmax-count``, ``--disable-straggler-on-startup``)
  and flags for the other settings; :func:`config_from_args` turns parsed args into a config.
- :class:`StragglerDetectionManager` drives the Detector from a training loop::

      manager = StragglerDetectionManager()
      manager.initialize(config_from_args(args))
      train_step = manager.wrap_train_step(train_step)
      for iteration in range(start, end):
          train_step(batch)
          if manager.check_stragglers(iteration):     # same answer on every rank
              save_checkpoint(); break
      manager.shutdown()

Report points are agreed by one small broadcast from the reporting rank (group rank 0), which
also carries runtime changes from the HTTP controller (:mod:`.controller`), so every rank applies
them at the same iteration.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import math
import statistics
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._checks import check_bool, check_fraction, check_int, check_seconds
from . import _common
from .controller import DEFAULT_HOST, ControlState, StragglerController

__all__ = ["StragglerDetectionConfig", "NVRxStragglerDetectionConfig", "add_straggler_args",
           "config_from_args", "StragglerDetectionManager", "ReportSchedule"]

_internal_log = logging.getLogger("straggler")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    wait in a report-point collective).

    Values are checked when the object is built and again by :meth:`finalize`.
    """

    enabled: bool = False
    report_time_interval: float = 300.0
    calc_relative_gpu_perf: bool = True
    calc_individual_gpu_perf: bool = True
    num_gpu_perf_scores_to_print: int = 5
    gpu_relative_perf_threshold: float = 0.7
    gpu_individual_perf_threshold: float = 0.7
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
        if not _is_int(self.straggler_ctrlr_port) or not 0 <= self.straggler_ctrlr_port <= 65535:
            raise ValueError(f"`straggler_ctrlr_port={self.straggler_ctrlr_port!r}` must be an "
                             "integer between 0 and 65535")
        for name in ("logger_name", "straggler_ctrlr_host"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"`{name}={value!r}` must be a non-empty string")
        if self.node_name is not None and (not isinstance(self.node_name, str)
                                           or not self.node_name.strip()):
            raise ValueError(f"`node_name={self.node_name!r}` must be a non-empty string or None")

    @property
    def scores_to_compute(self) -> list[str]:
        """The ``scores_to_compute`` list for ``Detector.initialize``."""
        return (["relative_perf_scores"] if self.calc_relative_gpu_perf else []) + \
               (["individual_perf_scores"] if self.calc_individual_gpu_perf else [])


#: Megatron-Bridge's name for the same config.
NVRxStragglerDetectionConfig = StragglerDetectionConfig


# ------------------------------------------------------------------------------------------------
# Command-line flags


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
_non_empty = _arg_type("a name", str, lambda v: bool(v.strip()), "a non-empty string")

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
    g.add_argument("--straggler-ctrlr-host", type=_non_empty, default=d.straggler_ctrlr_host,
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
    g.add_argument("--straggler-logger-name", type=_non_empty, default=d.logger_name,
                   help="Logger for the report lines. Default: %(default)s.")
    g.add_argument("--straggler-node-name", type=_non_empty, default=None,
                   help="Name of this node in reports. Default: the host name.")
    g.add_argument("--straggler-sync-timeout", type=_timeout_seconds, default=d.sync_timeout_s,
                   help="Longest wait, in seconds, in a report-point collective. "
                        "Default: %(default)s.")
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
    )


# ------------------------------------------------------------------------------------------------
# When to meet


class ReportSchedule:
    """Decides, on the reporting rank, when the ranks meet next and whether to report then.

    Every rank counts its calls to :meth:`tick`; a meeting ("sync point") is due when the count
    reaches the agreed target. At a sync point the reporting rank calls :meth:`plan`, which says
    whether the interval that just ended is reported and how many steps until the next meeting;
    the result is broadcast, and every rank calls :meth:`agree` with it. The first meeting is
    after ``first_sync`` steps (NVRx estimates step time over 16 steps too); later ones are
    spaced by ``report_time_interval`` divided by the median recent step time. Pure logic: the
    clock is injected.
    """

    FIRST_SYNC = 16
    MAX_STEPS = 2**31 - 1

    def __init__(self, min_steps: int = 1, clock: Callable[[], float] = time.monotonic,
                 first_sync: int = FIRST_SYNC) -> None:
        self._clock = clock
        self._min_steps = max(1, int(min_steps))
        self._count = 0
        self._next = max(1, int(first_sync))
        self._last_tick: float | None = None
        self._step_s: deque[float] = deque(maxlen=64)
        self._window_start = clock()

    @property
    def count(self) -> int:
        """Steps counted so far."""
        return self._count

    def tick(self) -> bool:
        """Count one step; True when this step is a sync point."""
        now = self._clock()
        if self._last_tick is not None:
            self._step_s.append(now - self._last_tick)
        self._last_tick = now
        self._count += 1
        return self._count >= self._next

    def plan(self, interval_s: float, timing: bool,
             max_wait_s: float | None = None) -> tuple[bool, int]:
        """At a sync point, on the reporting rank: (report now?, steps until the next meeting).

        With ``max_wait_s`` the ranks meet at least that often (to hear the controller), even
        when the report interval is longer; such meetings are not reports.
        """
        now = self._clock()
        step_s = statistics.median(self._step_s) if self._step_s else 0.0
        elapsed = now - self._window_start
        report = timing and elapsed >= 0.9 * interval_s
        remaining = interval_s if (report or not timing) else interval_s - elapsed
        if max_wait_s is not None:
            remaining = min(remaining, max_wait_s)
        steps = math.ceil(remaining / step_s) if step_s > 0 else self.MAX_STEPS
        return report, int(min(self.MAX_STEPS, max(self._min_steps, steps)))

    def agree(self, report: bool, steps: int, timing_started: bool = False) -> None:
        """Apply the broadcast plan; restart the window after a report or when timing (re)starts."""
        self._next = self._count + max(1, int(steps))
        if report or timing_started:
            self._window_start = self._clock()


# ------------------------------------------------------------------------------------------------
# The manager


class TrainStep:
    """What :meth:`StragglerDetectionManager.wrap_train_step` returns: call it like the step.

    While detection is on, calls go through the Detector's wrapper (attribute ``train_step``,
    replaced by ``Detector.wrap_callables``); while it is off, straight to the original function.
    """

    def __init__(self, fn: Callable[..., Any], manager: StragglerDetectionManager) -> None:
        self.original = fn
        self.train_step = fn
        self.callable_id: Any = None
        self._manager = manager
        self.calls_timed = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._manager.timing:
            self.calls_timed += 1
            return self.train_step(*args, **kwargs)
        return self.original(*args, **kwargs)

    @property
    def is_wrapped(self) -> bool:
        """Whether the Detector's wrapper is in place."""
        return self.train_step is not self.original


# Vector broadcast at a sync point: a marker (catches a peer that is somewhere else), the report
# flag, the new state and the steps to the next meeting.
_MARKER = 20251122.0


class StragglerDetectionManager:
    """Straggler detection for a hand-written training loop (Megatron-Bridge's manager, fixed).

    Every rank creates one, calls :meth:`initialize`, wraps its train step with
    :meth:`wrap_train_step` and calls :meth:`check_stragglers` once per iteration. The reporting
    rank (group rank 0) logs the report and, with ``enable_controller``, serves the HTTP
    controller; the ranks then also meet every ``control_poll_s`` seconds (one small broadcast)
    so that a change applies soon even with a long report interval. Internal failures are
    logged once and switch the manager off; training goes on.
    """

    def __init__(self, config: StragglerDetectionConfig | None = None, *,
                 process_group: Any = None, control_poll_s: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.control_poll_s = check_seconds("control_poll_s", control_poll_s)
        self.config = config
        self.process_group = process_group
        self._clock = clock
        self._initialized = False
        self._failed = False
        self._owns_detector = False
        self._state: ControlState | None = None
        self._schedule: ReportSchedule | None = None
        self._controller: StragglerController | None = None
        self._steps: list[TrainStep] = []
        self._log = logging.getLogger(self.config.logger_name if config else "straggler")
        self.last_report: Any = None
        self.last_stragglers: dict[str, set] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def initialize(self, config: StragglerDetectionConfig | None = None) -> None:
        """Start detection as ``config`` says (a no-op when ``config.enabled`` is False).

        Raises ``RuntimeError`` when called twice and ``ValueError`` for a bad config.
        """
        if self._initialized:
            raise RuntimeError("StragglerDetectionManager.initialize() was already called")
        config = config if config is not None else self.config
        if config is None:
            raise ValueError("`config=None`: pass a StragglerDetectionConfig")
        if not isinstance(config, StragglerDetectionConfig):
            raise ValueError(f"`config={config!r}` must be a StragglerDetectionConfig")
        config.finalize()
        self.config = config
        self._log = logging.getLogger(config.logger_name)
        self._initialized = True
        self._failed = False  # a fresh start after shutdown()
        self._steps = []
        if not config.enabled:
            return
        try:
            from straggler import Detector  # the package's core; imported when first used

            Detector.initialize(scores_to_compute=config.scores_to_compute, gather_on_rank0=True,
                                profiling_interval=config.profiling_interval,
                                report_time_interval=config.report_time_interval,
                                node_name=config.node_name, process_group=self.process_group)
        except Exception:  # noqa: BLE001 - fail open: training goes on without detection
            self._fail("Detector.initialize() failed")
            return
        if not Detector.initialized:  # STRAGGLER_DISABLE=1: the Detector is a no-op
            self._log.info("straggler detection is disabled by STRAGGLER_DISABLE")
            return
        self._owns_detector = True
        self._state = ControlState(enabled=not config.disable_straggler_on_startup,
                                   gpu_relative_perf_threshold=config.gpu_relative_perf_threshold,
                                   gpu_individual_perf_threshold=(
                                       config.gpu_individual_perf_threshold),
                                   report_time_interval=float(config.report_time_interval))
        self._schedule = ReportSchedule(min_steps=config.profiling_interval, clock=self._clock)
        if self.is_reporting_rank and config.enable_controller:
            controller = StragglerController(self._state, host=config.straggler_ctrlr_host,
                                             port=config.straggler_ctrlr_port)
            try:
                self._controller = controller.start()
            except OSError as exc:
                self._log.warning("straggler detection cannot be controlled: cannot listen on "
                                  "%s:%d (%s); detection goes on without the controller",
                                  config.straggler_ctrlr_host, config.straggler_ctrlr_port, exc)
        self._log.info("straggler detection %s (report interval %.1f s)",
                       "enabled" if self._state.enabled else "started switched off",
                       config.report_time_interval)

    def shutdown(self) -> None:
        """Stop the controller and the Detector; safe to call more than once and on failure."""
        if self._controller is not None:
            self._controller.close()
            self._controller = None
        if self._owns_detector:
            self._owns_detector = False
            try:
                from straggler import Detector

                Detector.shutdown()
            except Exception:  # noqa: BLE001 - shutdown never raises into the training script
                _internal_log.exception("straggler: Detector.shutdown() failed")
        self._initialized = False
        self._state = None

    # -- persistence --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """This rank's detector state (individual baselines); save it per rank, {} when inactive."""
        if not self.active:
            return {}
        from straggler import Detector

        return {"detector": Detector.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore this rank's :meth:`state_dict` after :meth:`initialize`; ``{}`` is a no-op."""
        if not isinstance(state, Mapping):
            raise ValueError(f"`state={state!r:.100}` must be a mapping from state_dict()")
        if not state or not self.active:
            return
        if "detector" not in state:
            raise ValueError(f"`state={state!r:.100}` is not a StragglerDetectionManager state")
        from straggler import Detector

        Detector.load_state_dict(state["detector"])

    # -- state ------------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Initialized with detection configured, and not switched off by an internal failure."""
        return self._initialized and self._state is not None and not self._failed

    @property
    def timing(self) -> bool:
        """Whether train steps are timed now (active and switched on)."""
        return self.active and self._state.enabled  # type: ignore[union-attr]

    @property
    def state(self) -> ControlState | None:
        """The runtime state every rank applies (None when inactive)."""
        return self._state

    @property
    def controller(self) -> StragglerController | None:
        """The HTTP controller on the reporting rank, if it runs."""
        return self._controller

    @property
    def is_reporting_rank(self) -> bool:
        """Whether this process is group rank 0 (gets the report, logs, runs the controller)."""
        return _common.group_rank(self.process_group) == 0

    # -- wrapping -----------------------------------------------------------------------------

    def wrap_train_step(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Return a callable to use instead of ``fn``: it times ``fn`` while detection is on.

        Use the returned object; calling ``fn`` itself is not timed (and the first report will
        warn that nothing was captured). When detection is not configured, returns ``fn``.
        """
        if not callable(fn):
            raise ValueError(f"`fn={fn!r}` must be callable")
        if not self._initialized:
            self._log.warning("straggler detection: wrap_train_step() was called before "
                              "initialize(); the train step will not be timed")
        if not self.active:
            return fn
        step = TrainStep(fn, self)
        try:
            from straggler import CallableId, Detector

            step.callable_id = CallableId(step, "train_step")
            Detector.wrap_callables([step.callable_id])
        except Exception:  # noqa: BLE001 - fail open: training goes on untimed
            self._fail("wrapping the train step failed")
            return fn
        if not step.is_wrapped:
            self._log.warning("straggler detection: Detector.wrap_callables left the train step "
                              "unwrapped; no step will be timed and scores will be NaN")
        self._steps.append(step)
        return step

    # -- the per-iteration call -----------------------------------------------------------------

    def check_stragglers(self, iteration: int) -> bool:
        """Call once per iteration on every rank; True means stop (the same on every rank).

        Cheap except at sync points, where the ranks exchange one small broadcast and, when a
        report is due, produce the report (collective). Only with ``stop_if_detected`` can it
        return True.
        """
        if not self.active:
            return False
        try:
            if not self._schedule.tick():  # type: ignore[union-attr]
                return False
            return self._sync(iteration)
        except Exception:  # noqa: BLE001 - fail open
            self._fail(f"straggler check at iteration {iteration} failed")
            return False

    def _sync(self, iteration: int) -> bool:
        from straggler import Detector

        config, state, schedule = self.config, self._state, self._schedule
        assert config is not None and state is not None and schedule is not None
        group, timeout = self.process_group, config.sync_timeout_s
        reporting = self.is_reporting_rank
        if reporting:
            wanted = self._controller.wanted() if self._controller else state
            # With a controller, meet at least every control_poll_s so that a change does not
            # wait for a long report interval to end.
            poll = self.control_poll_s if self._controller is not None else None
            report_now, steps = schedule.plan(wanted.report_time_interval, state.enabled, poll)
            vector = [_MARKER, float(report_now), float(wanted.enabled),
                      wanted.gpu_relative_perf_threshold, wanted.gpu_individual_perf_threshold,
                      wanted.report_time_interval, float(steps)]
        else:
            vector = [0.0] * 7
        got = _common.broadcast_values(vector, group, timeout)
        if got[0] != _MARKER:
            raise RuntimeError(f"sync point mismatch: got {got!r} from the reporting rank")
        report_now, steps = bool(got[1]), int(got[6])
        new_state = ControlState(enabled=bool(got[2]), gpu_relative_perf_threshold=got[3],
                                 gpu_individual_perf_threshold=got[4],
                                 report_time_interval=got[5])

        stop = False
        summary = None
        if report_now:
            report = Detector.generate_report()
            self._warn_if_nothing_timed(report, reporting)
            found = False
            if report is not None:
                # Settings changed since the last meeting apply from this report on.
                try:
                    found, summary = self._handle_report(report, iteration, new_state)
                except Exception:  # noqa: BLE001 - still meet the peers in the broadcast
                    self._log.exception("straggler detection: reading the report failed")
            if config.stop_if_detected:
                stop = bool(_common.broadcast_values([float(found)], group, timeout)[0])
                if stop:
                    self._log.error("Detected stragglers. Training should be stopped.")
        if new_state != state:
            self._apply(state, new_state)
        schedule.agree(report_now, steps, timing_started=new_state.enabled and not state.enabled)
        if self._controller is not None:
            self._controller.applied(new_state, summary)
        return stop

    def _apply(self, old: ControlState, new: ControlState) -> None:
        self._state = new
        if self.is_reporting_rank:
            if old.enabled != new.enabled:
                self._log.info("Toggling straggler detection %s", "ON" if new.enabled else "OFF")
            self._log.info("straggler detection settings now: %s", new)

    def _warn_if_nothing_timed(self, report: Any, reporting: bool) -> None:
        calls = sum(step.calls_timed for step in self._steps)
        for step in self._steps:
            step.calls_timed = 0
        if calls == 0:
            self._log.warning("straggler detection: no train step was timed since the last "
                              "report on this rank; call the function returned by "
                              "wrap_train_step(), not the original")

    # -- report handling (reporting rank) ---------------------------------------------------------

    def _handle_report(self, report: Any, iteration: int,
                       state: ControlState) -> tuple[bool, dict[str, Any]]:
        config = self.config
        assert config is not None
        section = str(self._steps[0].callable_id) if self._steps else None
        ev = _common.evaluate_report(report, state.gpu_relative_perf_threshold,
                                     state.gpu_individual_perf_threshold, section, self._log,
                                     config.num_gpu_perf_scores_to_print)
        self.last_report = report
        self.last_stragglers = ev.stragglers
        for line in megatron_lines(report, iteration, config.straggler_minmax_count,
                                   ev.relative, ev.individual):
            self._log.info(line)
        stats = ev.stats()
        if config.enable_logging:
            for prefix in ("gpu_relative_perf", "gpu_individual_perf"):
                part = {k: v for k, v in stats.items() if k.startswith(prefix + "/")}
                if part:
                    self._log.info("%s scores: %s", prefix, part)
        causes = {r: _common.cause_label(report, r) for r in {*ev.relative, *ev.individual}}
        summary = {"iteration": iteration, "time": time.time(),
                   "relative_perf_scores": ev.relative, "relative_source": ev.relative_source,
                   "individual_perf_scores": ev.individual,
                   "individual_source": ev.individual_source,
                   "stragglers_relative": sorted(s.rank for s in ev.stragglers_relative),
                   "stragglers_individual": sorted(s.rank for s in ev.stragglers_individual),
                   "causes": {r: c for r, c in causes.items() if c}, "stats": stats,
                   "rank_to_node": dict(getattr(report, "rank_to_node", {}) or {})}
        return ev.found, summary

    def _fail(self, what: str) -> None:
        if not self._failed:
            _internal_log.exception("straggler: %s; straggler detection is now off on this rank "
                                    "and training goes on", what)
        self._failed = True


def megatron_lines(report: Any, iteration: int, minmax_count: int,
                   relative: Mapping[int, float] | None = None,
                   individual: Mapping[int, float] | None = None) -> list[str]:
    """Megatron-LM-style lines: min and max score with their ranks, then the bottom/top N.

    The first line reads ``[time] | iteration N | MnRelPerf/Rnk: 0.50/3 (cause) | MxRelPerf/Rnk:
    1.00/0 | MnIndPerf/Rnk: ... | MxIndPerf/Rnk: ...``; with ``minmax_count > 1`` two lines
    follow per score kind, as Megatron's ``^^^^ Bottom``/``^^^^ Top`` lines, with cause labels.
    ``relative``/``individual`` default to the report's GPU scores.
    """
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    parts = [f"[{stamp}]", f"iteration {iteration:8d}"]
    extra: list[str] = []
    for tag, field_name, given in (("RelPerf", "gpu_relative_perf_scores", relative),
                                   ("IndPerf", "gpu_individual_perf_scores", individual)):
        scores = dict(given if given is not None else getattr(report, field_name, {}) or {})
        finite = sorted(((s, r) for r, s in scores.items() if not math.isnan(s)))
        if not finite:
            if scores:
                parts.append(f"Mn{tag}/Rnk: nan | Mx{tag}/Rnk: nan")
            continue
        (lo, lo_rank), (hi, hi_rank) = finite[0], max(finite, key=lambda sr: (sr[0], -sr[1]))
        cause = _common.cause_label(report, lo_rank)
        parts.append(f"Mn{tag}/Rnk: {lo:.2f}/{lo_rank}" + (f" ({cause})" if cause else ""))
        parts.append(f"Mx{tag}/Rnk: {hi:.2f}/{hi_rank}")
        if minmax_count > 1:
            n = min(minmax_count, len(finite))

            def entry(score: float, rank: int) -> str:
                label = _common.cause_label(report, rank)
                return f"{score:.2f}/{rank}" + (f" [{label}]" if label else "")

            bottom = ", ".join(entry(s, r) for s, r in finite[:n])
            top = ", ".join(entry(s, r) for s, r in sorted(finite, key=lambda sr: (-sr[0],
                                                                                   sr[1]))[:n])
            extra.append(f"^^^^ Bottom {n} Ranks with lowest  {tag}: {bottom},")
            extra.append(f"^^^^ Top    {n} Ranks with highest {tag}: {top},")
    return [" | ".join(parts), *extra]
