"""`StragglerDetectionManager`: straggler detection driven from a hand-written training loop.

Report points are agreed by one small broadcast from the reporting rank (group rank 0), which
also carries runtime changes from the HTTP controller (:mod:`..controller`), so every rank applies
them at the same iteration; when to meet is `ReportSchedule`'s decision. Every collective runs
on the detector's own gloo group with its timeout (``sync_timeout_s``), never on the training
group; whether to stop is the report's agreed decision (`Detector.last_decision`). A rank whose
manager fails leaves the detector's protocol at once (its communicator closes), so its peers'
next sync point fails at once and they turn off too; training goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ..._checks import check_process_group, check_seconds
from ...options import to_options
from ...reporting.decision import DecisionRule
from .. import _common
from ..controller import ControlState, StragglerController
from .config import StragglerDetectionConfig
from .report import read_report
from .schedule import PLAN_WIDTH, ReportSchedule, decode_plan, encode_plan

__all__ = ["StragglerDetectionManager", "TrainStep"]

log = logging.getLogger("straggler")


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
        # Checked here: Detector.initialize's own check would only turn detection off (fail open).
        self.process_group = check_process_group("process_group", process_group)
        if not callable(clock):
            raise ValueError(f"`clock={clock!r}` must be a callable returning seconds")
        self._clock = clock
        self._initialized = False
        self._failed = False
        self._stopped = False  # check_stragglers returned True: a stop for stragglers
        self._owns_detector = False
        self._state: ControlState | None = None
        self._schedule: ReportSchedule | None = None
        self._controller: StragglerController | None = None
        self._steps: list[TrainStep] = []
        self._log = logging.getLogger(config.logger_name if config else "straggler")
        self.last_report: Any = None
        self.last_stragglers: dict[str, set] = {}
        self.last_decision: Any = None  # the agreed decision of the last report

    # -- lifecycle ---------------------------------------------------------------------------

    def initialize(self, config: StragglerDetectionConfig | Mapping[str, Any] | None = None
                   ) -> None:
        """Start detection as ``config`` says (a no-op when ``config.enabled`` is False).

        ``config`` may also be a dict of its fields (`straggler.options.to_options`). Raises
        ``RuntimeError`` when called twice and ``ValueError`` for a bad config.
        """
        if self._initialized:
            raise RuntimeError("StragglerDetectionManager.initialize() was already called")
        config = config if config is not None else self.config
        if config is None:
            raise ValueError("`config=None`: pass a StragglerDetectionConfig")
        config = to_options(StragglerDetectionConfig, config, "config")  # a dict: its fields
        assert config is not None  # only None itself would give the defaults, refused above
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
                                node_name=config.node_name, process_group=self.process_group,
                                comm_timeout_s=config.sync_timeout_s)
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
            except Exception:
                log.exception("straggler: Detector.shutdown() failed")
        self._initialized = False
        self._state = None

    # -- persistence --------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """This rank's detector state (individual baselines); save it per rank, {} when inactive.

        After `check_stragglers` returned True (a stop), the policy's verdict is left out, so
        the restarted job confirms a straggler again from fresh reports instead of stopping at
        its first one (`_common.without_verdicts`).
        """
        if not self.active:
            return {}
        from straggler import Detector

        state = Detector.state_dict()
        return {"detector": _common.without_verdicts(state) if self._stopped else state}

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
        core = Detector.core()
        if core is None or not core.enabled:  # the detector turned off (its peers did too)
            raise RuntimeError("the detector is off")
        if self.is_reporting_rank:
            wanted = self._controller.wanted() if self._controller else state
            # With a controller, meet at least every control_poll_s so that a change does not
            # wait for a long report interval to end.
            poll = self.control_poll_s if self._controller is not None else None
            report_now, steps = schedule.plan(wanted.report_time_interval, state.enabled, poll)
            vector = encode_plan(report_now, wanted, steps)
        else:
            vector = [0.0] * PLAN_WIDTH
        with core.comm.during(f"StragglerDetectionManager.check_stragglers({iteration}) "
                              "(a sync point)"):
            plan = core.comm.broadcast_from_first(torch.tensor(vector, dtype=torch.float64))
        report_now, new_state, steps = decode_plan(plan.tolist())

        stop = False
        summary = None
        if report_now:
            # Settings changed since the last meeting apply from this report on.
            Detector.set_decision_rule(DecisionRule(
                config.verdict, new_state.gpu_relative_perf_threshold,
                new_state.gpu_individual_perf_threshold, self._section()))
            seen = Detector.last_decision()
            report = Detector.generate_report()
            _warn_if_nothing_timed(self._steps, self._log)
            decision = Detector.last_decision()
            if report is not None:
                try:
                    summary = self._handle_report(report, iteration, new_state,
                                                  None if decision is seen else decision)
                except Exception:  # noqa: BLE001 - reading it is not part of the protocol
                    self._log.exception("straggler detection: reading the report failed")
            if decision is seen:  # no decision: the report failed and the detector is off
                raise RuntimeError("the report failed; the detector turned off")
            self.last_decision = decision
            if summary is not None and decision is not None:  # what GET / shows as acted on
                summary["decision"] = {"verdict": decision.verdict.value,
                                       "stragglers": sorted(decision.stragglers),
                                       "suspects": sorted(decision.suspects)}
            stop = bool(config.stop_if_detected and decision is not None and decision.act)
            self._stopped = self._stopped or stop
            if stop and decision is not None:
                self._log.error("Detected stragglers %s. Training should be stopped.",
                                sorted(decision.stragglers))
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

    # -- report handling (reporting rank) ---------------------------------------------------------

    def _section(self) -> str | None:
        return str(self._steps[0].callable_id) if self._steps else None

    def _handle_report(self, report: Any, iteration: int, state: ControlState,
                       decision: Any) -> dict[str, Any]:
        config = self.config
        assert config is not None
        self.last_report = report
        ev, summary = read_report(report, iteration, config, state, self._section(), self._log,
                                  decision)
        self.last_stragglers = ev.stragglers
        return summary

    def _fail(self, what: str) -> None:
        if not self._failed:
            log.exception("straggler: %s; straggler detection is now off on this rank "
                          "and training goes on", what)
        self._failed = True
        # Leave the detector's protocol for good: its communicator closes, so a peer at the next
        # sync point or report fails at once (and turns off) instead of waiting for this rank.
        try:
            from straggler import Detector

            core = Detector.core()
            if core is not None:
                core.lifecycle.stop_reporting()
        except Exception:  # noqa: BLE001 - already failing open
            pass


def _warn_if_nothing_timed(steps: list[TrainStep], log: logging.Logger) -> None:
    """At a report: warn when no call went through a wrapped step since the last one."""
    calls = sum(step.calls_timed for step in steps)
    for step in steps:
        step.calls_timed = 0
    if calls == 0:
        log.warning("straggler detection: no train step was timed since the last "
                    "report on this rank; call the function returned by "
                    "wrap_train_step(), not the original")
