"""`Detector`: NVRx's class-level API over a `DetectorCore` with an explicit lifetime.

`Detector.initialize(...)` builds one `DetectorCore` and `Detector.shutdown()` closes it; every
other class method forwards to it. Names, parameters and defaults are NVRx's, so migrating is
an import change; our additions are keyword arguments with defaults.

`DetectorCore` puts the parts together, each with one concern:

- `DetectorOptions` (detector_options.py): the arguments, checked once;
- `SectionRegistry` (timing/registry.py): sections by name, bounded names, hooks, windows;
- `GpuTiming` (timing/gpu.py): the timing engine, stream getter and op observer;
- `ReportCycle` (report_cycle.py): reports, the report interval, persistent state;
- `Lifecycle` (lifecycle.py): fail open, fork and close;
- the communicator (dist/comm.py), telemetry (telemetry/nvml.py), observers (sinks/) and the
  FT bridge (integrations/ft/).

Fail open: an exception raised inside the detector is logged once, the detector disables
itself on every rank together and the training loop never sees it (lifecycle.py). A forked
child's detector is inert (forksafe.py). `STRAGGLER_DISABLE=1` turns the whole API into no-ops.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from . import _env
from ._checks import check_bool, check_name, check_roles
from .analysis.statistics import Statistic
from .detector_options import (
    DEFAULT_CAPACITY,
    DEFAULT_MAX_NAMES,
    DEFAULT_NAME_TTL_REPORTS,
    DetectorOptions,
)
from .lifecycle import Lifecycle
from .timing import collectives
from .timing.callables import CallableId, CallableWrapper
from .timing.gpu import GpuTiming
from .timing.registry import SectionRegistry, host_summaries
from .timing.sections import (
    NULL_CONTEXT,
    NullContext,
    Section,
    SectionContext,
    SectionHook,
    SectionKind,
)

if TYPE_CHECKING:
    import os
    from collections.abc import Hashable, Mapping

    from numpy.typing import ArrayLike
    from torch.distributed import ProcessGroup

    from ._core import TimerEngine
    from .analysis.policy import PolicyConfig, StragglerPolicy
    from .detector_options import ReportOptions
    from .hang import HangWatchdog
    from .integrations.ft import FTBridge
    from .integrations.ft.options import FTOptions
    from .reporting.decision import Decision, DecisionRule
    from .reporting.report import Report
    from .sinks.prometheus import PrometheusOptions
    from .sinks.reportlog import ReportLogOptions
    from .telemetry.options import TelemetryOptions
    from .telemetry.probe import ProbeResult
    from .timing.capture import OpCapture

__all__ = ["Detector", "DetectorCore", "DetectorOptions", "TelemetryProvider"]

log = logging.getLogger("straggler")


def disabled_by_env() -> bool:
    """`STRAGGLER_DISABLE` set to a true value (1/true/yes/on) turns the API into no-ops;
    ValueError for a value that is neither on nor off (straggler/_env.py)."""
    return _env.DISABLE.read()


class TelemetryProvider(Protocol):
    """Contributes a fixed-length vector of telemetry values to every report (e.g. NVML)."""

    @property
    def fields(self) -> Sequence[str]:
        """Names of the values, fixed for the provider's lifetime."""
        ...

    def sample(self) -> ArrayLike:
        """The window's values: len(fields) floats, NaN where unknown."""
        ...

    def close(self) -> None:
        """Release what the provider holds (threads, libraries); idempotent."""
        ...


class DetectorCore:
    """One detector lifetime: built by `Detector.initialize`, closed by `Detector.shutdown`.

    Takes `DetectorOptions` (or ``Detector.initialize``'s keyword arguments). Holds no
    class-level state, so tests may build and close several in a row. Its parts are public
    attributes: `options`, `registry` (sections and hooks), `gpu` (engine, stream, op
    observer; `gpu.use_engine`/`use_capture` take test doubles), `cycle` (reports), `lifecycle`
    (fail open), `comm`, `telemetry`, `observers`, `ft_bridge`, `wrapper` (wrapped callables),
    `hang` (the hang watchdog, straggler/hang/, or None).
    """

    def __init__(self, options: DetectorOptions | None = None, **arguments: Any) -> None:
        if options is not None and arguments:
            raise ValueError(f"`options={options!r}` and keyword arguments {sorted(arguments)}: "
                             "pass one or the other")
        # Validate everything before building anything, so bad input leaves nothing behind.
        opts = options if options is not None else DetectorOptions(**arguments)
        self.options = opts
        from .sinks.observers import make_observers

        # Report log and Prometheus exporter on the reporting rank (observers.py); None: off.
        self.observers = make_observers(opts.report_log, opts.prometheus)
        self.lifecycle = life = Lifecycle(self._disable, opts.agree_by_comm)
        self.gpu = GpuTiming(opts.timer_capacity, opts.per_op_capture, fail=life.fail,
                             warn_once=life.warn_once, on_change=self._specialise_all)
        self.registry = SectionRegistry(
            self.gpu, profiling_interval=opts.profiling_interval, capacity=opts.timer_capacity,
            gpu_interval=opts.gpu_interval, max_names=opts.max_names,
            name_ttl_reports=opts.name_ttl_reports, fail=life.fail, warn_once=life.warn_once)
        self.sections: dict[str, Section] = self.registry.sections  # the same dict, for readers
        self.hooks: list[SectionHook] = self.registry.hooks  # the same list, for readers
        self.wrapper = CallableWrapper(self.registry.section)
        self.telemetry: TelemetryProvider | None = None
        self.ft_bridge: FTBridge | None = None
        self.hang: HangWatchdog | None = None
        self.collectives_observed = False
        try:
            from .dist.comm import Comm

            self.comm = Comm.create(process_group=opts.process_group,
                                    timeout_s=opts.comm_timeout_s, call="Detector.initialize()")
            life.comm = self.comm
            check_roles(opts.roles, self.comm.global_ranks)
            # Every torch.distributed collective, for Report.waits/culprits (docs/culprits.md).
            self.collectives_observed = opts.collective_waits and collectives.start()
            self.telemetry = self._create_telemetry_provider()
            from .report_cycle import ReportCycle

            self.cycle = ReportCycle(opts, self.comm, self.registry, self.gpu, life,
                                     self.telemetry, self.observers)
            self.ft_bridge = self._create_ft_bridge(opts.ft_sections)
            if self.ft_bridge is not None:
                self.registry.hooks.append(self.ft_bridge)
                self.cycle.on_report = self.ft_bridge.on_report
            self.hang = self._create_hang_watchdog()
            if self.hang is not None:  # a peer already past a report: give up at once
                from .hang.absent import PeersPast

                comm = self.comm
                comm.stall_check = PeersPast(self.hang.store, comm.global_ranks[comm.rank],
                                             comm.global_ranks)
                self.hang.on_leave = self._leave_for_peers
            self.gpu.prepare_observer()  # may build the C++ op observer once (never raises)
        except BaseException:
            Lifecycle.close_quietly(self._closing_steps())
            raise
        from . import forksafe

        forksafe.track(self)
        self._exit_hook = self.lifecycle.close_at_exit(self.close)

    # -- parts built here --------------------------------------------------------------------
    def _create_ft_bridge(self, mode: str) -> FTBridge | None:
        """FT bridge: the NVRx fault-tolerance section hook, created here for `ft_sections`.

        Returns a `SectionHook` (appended to the hooks) or None. Owned by the FT integration
        (straggler/integrations/ft/, docs/ft.md).
        """
        if mode == "off":
            return None
        from .integrations.ft import create_bridge

        options = self.options.ft_options
        # FT timeouts are learned at report points through our communicator: only when every
        # rank of the job reports on the same iteration (else the reduction could not match).
        import torch.distributed as dist

        world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
        comm = self.comm
        if self.cycle.agree_by_comm and comm.world_size == world:
            if options.reduce_max is None:
                options = dataclasses.replace(options,
                                              reduce_max=lambda t: comm.all_reduce(t, "max"))
        elif options.calc_timeouts:
            log.info("straggler: FT timeouts are not learned: the detector's reports do not "
                     "involve every rank of the job")
            options = dataclasses.replace(options, calc_timeouts=False)
        return create_bridge(mode, options)

    def _create_hang_watchdog(self) -> Any:
        """Hang detection's watchdog thread (straggler/hang/, docs/hang.md), or None when off.
        """
        options = self.options.hang
        if options is None:
            return None
        from .hang import start_hang_detection

        telemetry = self.telemetry

        def gpu() -> str:
            identity = getattr(telemetry, "identity", None)
            return (identity.uuid or identity.pci_bus_id) if identity is not None else ""

        registry, cycle = self.registry, self.cycle  # cycle.tracker is replaced on a restart
        return start_hang_detection(options, node=self.options.node_name, gpu=gpu,
                                    sections=registry.sections.values,
                                    step=lambda: cycle.tracker.current_iter,
                                    observers=self.observers, ft_bridge=self.ft_bridge)

    def _create_telemetry_provider(self) -> TelemetryProvider | None:
        """Telemetry provider: the per-report vector of device telemetry (NVML), or None."""
        if not self.options.telemetry.enabled:
            return None
        from .telemetry.nvml import NvmlTelemetry

        return NvmlTelemetry(period_s=self.options.telemetry.period_s)

    # -- state the integrations read ---------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """Whether sections are timed (False once failed or closed)."""
        return self.registry.enabled

    @property
    def engine(self) -> TimerEngine | None:
        """The timing engine (`straggler._core.TimerEngine`), or None before the first need."""
        return self.gpu.engine

    @property
    def capture(self) -> OpCapture | None:
        """The op observer (`straggler.timing.capture.OpCapture`), or None."""
        return self.gpu.capture

    def section_summaries(self) -> dict[str, dict[Statistic, float]]:
        """This window's host-time statistics (ms) of every section with samples."""
        return host_summaries(self.sections)

    def no_gpu_timers_reason(self) -> str | None:
        """Why this rank has no GPU timers so far (None: it has some)."""
        return self.gpu.no_timers_reason()

    # -- sections, hooks, callables ----------------------------------------------------------
    def section(self, name: str, profile_cuda: bool = True,
                kind: SectionKind | str = SectionKind.COMPUTE) -> SectionContext | NullContext:
        """The reusable context of section `name` (created on first use)."""
        return self.registry.section(name, profile_cuda, kind)

    def add_hook(self, hook: SectionHook) -> None:
        """Call `hook.on_section_enter/exit(name)` around every outermost section entry."""
        self.registry.add_hook(hook)

    def remove_hook(self, hook: SectionHook) -> None:
        """Stop notifying `hook` (a no-op if it is not registered)."""
        self.registry.remove_hook(hook)

    def wrap_callables(self, callable_ids: Sequence[CallableId], profile_cuda: bool = True) -> None:
        """See `Detector.wrap_callables`."""
        self.wrapper.wrap(callable_ids, check_bool("profile_cuda", profile_cuda))

    def restore_original_callables(self) -> None:
        """See `Detector.restore_original_callables`."""
        self.wrapper.restore()

    # -- reports -----------------------------------------------------------------------------
    def generate_report(self) -> Report | None:
        """Collective: every rank of the group calls it on the same iteration."""
        return self.cycle.generate_report()

    def generate_report_if_interval_elapsed(self) -> Report | None:
        """Count one iteration; the report when it is due (collective), else None."""
        return self.cycle.generate_report_if_interval_elapsed()

    def is_interval_elapsed(self) -> bool:
        """Whether a report is due on this iteration (False once disabled)."""
        return self.cycle.is_interval_elapsed()

    def last_decision(self) -> Decision | None:
        """The decision of the last report (`straggler.reporting.decision.Decision`), the same
        on every rank; None before the first report."""
        return self.cycle.last_decision

    def set_decision_rule(self, rule: DecisionRule) -> None:
        """How reports become decisions from now on (a `DecisionRule`); see `Detector`."""
        from .reporting.decision import DecisionRule

        if not isinstance(rule, DecisionRule):
            raise ValueError(f"`rule={rule!r}` must be a straggler.reporting.decision."
                             "DecisionRule")
        self.cycle.decision_rule = rule

    def state_dict(self) -> dict[str, Any]:
        """What a resumed job needs: the individual references and the iteration count."""
        return self.cycle.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore `state_dict()` output; ValueError when `state` is not one."""
        self.cycle.load_state_dict(state)

    def run_probe(self) -> dict[int, ProbeResult] | None:
        """Collective: the GPU health probe on every rank (see `Detector.run_probe`)."""
        if not self.enabled:
            return None
        with self.cycle.exclusive("Detector.run_probe()") as alone:
            if not alone:
                return None
            try:
                from .telemetry.device import current_cuda_device
                from .telemetry.probe import probe_group

                with self.comm.during("Detector.run_probe()"):
                    return probe_group(self.comm, current_cuda_device())
            except Exception as exc:  # noqa: BLE001 - fail open
                self.fail(exc)
                return None

    # -- lifetime ----------------------------------------------------------------------------
    def fail(self, exc: BaseException, *, in_report: bool = False) -> None:
        """Log once, then disable (see `Lifecycle.fail`)."""
        self.lifecycle.fail(exc, in_report=in_report)

    def _leave_for_peers(self, why: str) -> None:
        """On the hang watchdog's thread: the peers wait for this rank in a report it did not
        join (straggler/hang/absent.py). Close the communicator, so that their collective fails
        at once; the training thread turns off at its next detector call (logged here, once).
        """
        life = self.lifecycle
        if life.done or life.forked:
            return
        if not life.failed:
            life.failed = True
            log.warning("straggler: the other ranks of its group waited for rank %d in a "
                        "detector report it did not join (%s); straggler detection is off on "
                        "this rank for the rest of this run (training continues)",
                        self.comm.global_ranks[self.comm.rank], why)
        with contextlib.suppress(Exception):  # best effort: the peers time out otherwise
            self.comm.close()

    def _disable(self) -> None:
        if self.collectives_observed:
            collectives.stop()
        self.gpu.disable()
        self.registry.set_enabled(False)

    def _specialise_all(self) -> None:
        self.registry.specialise_all()

    def forget_after_fork(self) -> None:
        """In a forked child: inert. Native objects are kept, never stopped (forksafe.py)."""
        comm = self.comm
        if self.hang is not None:
            self.hang.forget_after_fork()
        self.lifecycle.forget_after_fork(
            [*self.gpu.native_objects(), getattr(self.telemetry, "_sampler", None),
             self.telemetry, getattr(comm, "_backend", None), comm,
             getattr(getattr(self, "cycle", None), "deadline_comm", None),
             getattr(getattr(getattr(self, "cycle", None), "deadline_comm", None), "_backend",
                     None)])

    def close(self) -> None:
        """Restore callables, leave capture, close the engine, telemetry and communicator.

        A no-op in a forked child (the parent's threads and contexts are not ours to stop).
        """
        self.lifecycle.forget_exit_hook(getattr(self, "_exit_hook", None))
        self.lifecycle.close(self._closing_steps())

    def _close_deadline(self) -> None:
        cycle = getattr(self, "cycle", None)
        if cycle is not None:
            cycle.close_deadline()

    def _closing_steps(self) -> list[tuple[str, Callable[[], Any]]]:
        return [
            ("hang watchdog", _closer(self.hang)),
            ("callables", self.wrapper.restore),
            ("collectives", collectives.stop if self.collectives_observed else _nothing),
            ("capture", self.gpu.close_capture),
            ("engine", self.gpu.close_engine),
            ("telemetry", _closer(self.telemetry)),
            ("ft bridge", _closer(self.ft_bridge)),
            ("report deadline", self._close_deadline),
            ("comm", _closer(self.lifecycle.comm)),
            ("observers", _closer(self.observers)),
            ("hooks", self.hooks.clear),
        ]


def _nothing() -> None:
    """A closing step with nothing to do."""


def _closer(part: Any) -> Callable[[], None]:
    """A closing step for `part`: its ``close()``, or nothing (not built, or nothing to close).
    """
    def close() -> None:
        if callable(getattr(part, "close", None)):
            part.close()

    return close


class Detector:
    """Straggler detector, used through class methods (NVRx-compatible singleton).

    ``Detector.initialize(...)`` once per process (on every rank of the group), then wrap
    step code in ``with Detector.detection_section("name"):`` and call
    ``Detector.generate_report_if_interval_elapsed()`` once per iteration on every rank.
    """

    initialized: bool = False
    _core: DetectorCore | None = None
    # Why the API is a no-op on this rank although STRAGGLER_DISABLE is not set here: a peer
    # declined at initialize (it has STRAGGLER_DISABLE set), or initialize raised (after its
    # arguments were checked). None: not so.
    _declined: str | None = None
    # NVRx exposes these as class attributes; kept in sync by initialize()/shutdown().
    scores_to_compute: ClassVar[list[str]] = []
    gather_on_rank0: bool = True
    profiling_interval: int = 1
    report_time_interval: float = 60.0
    custom_sections: ClassVar[dict[str, Section]] = {}
    #: NVRx's attributes: the report generator (`straggler.reporting.ReportGenerator`) and the
    #: report interval (`straggler.timing.interval.ReportIntervalTracker`); None when not
    #: initialized.
    reporter: ClassVar[Any] = None
    report_interval_tracker: ClassVar[Any] = None

    def __init__(self) -> None:
        raise RuntimeError("class Detector should not be instantiated")

    @classmethod
    def initialize(cls, scores_to_compute: str | Sequence[str] = "all",
                   gather_on_rank0: bool = True, profiling_interval: int = 1,
                   report_time_interval: float = 60, node_name: str | None = None,
                   process_group: ProcessGroup | None = None, *,
                   per_op_capture: bool = False,
                   comm_timeout_s: float = 120.0, ft_sections: str = "auto",
                   timer_capacity: int = DEFAULT_CAPACITY,
                   report_options: ReportOptions | None = None,
                   ft_options: FTOptions | Mapping[str, object] | None = None,
                   telemetry: bool | TelemetryOptions = True,
                   policy: PolicyConfig | StragglerPolicy | bool | None = True,
                   roles: Mapping[int, Hashable] | None = None,
                   report_log: str | os.PathLike[str] | ReportLogOptions | bool | None = None,
                   prometheus: int | PrometheusOptions | bool | None = None,
                   max_names: int = DEFAULT_MAX_NAMES,
                   name_ttl_reports: int = DEFAULT_NAME_TTL_REPORTS,
                   gpu_sample_interval: int | None = None,
                   collective_waits: bool = True,
                   hang_timeout_s: float | str | None = "auto",
                   hang_action: str = "none") -> None:
        """Set the detector up (on every rank of `process_group`); see docs/detector.md.

        ``policy`` (a `straggler.analysis.policy.PolicyConfig`, a `StragglerPolicy`, True for the
        defaults, None/False for none) and ``roles`` (global rank -> role, e.g. the pipeline
        stage) configure the persistence policy behind ``Report.confirmed``; see docs/policy.md.
        ``report_log`` (a path; env ``STRAGGLER_REPORT_LOG``) appends one JSON line per report
        (docs/reportlog.md); ``prometheus`` (a port; env ``STRAGGLER_PROMETHEUS_PORT``) serves
        the latest report on 127.0.0.1 (docs/metrics.md). Both on the reporting rank, off by
        default; False turns one off whatever the environment says.
        ``max_names`` caps the live section names; a section unused for ``name_ttl_reports``
        reports is forgotten (docs/detector.md, "Sections": bounded names).
        ``gpu_sample_interval``: without per-op capture, a section's GPU busy time is measured
        on every n-th profiled entry only (default: 10 with ``profiling_interval=1``, else 1,
        i.e. every profiled entry as in NVRx; docs/detector.md, "GPU sampling").
        ``collective_waits``: observe every torch.distributed collective and name the ranks the
        job waits for (``Report.waits``, ``Report.culprits``; docs/culprits.md).
        ``ft_options``: the FT bridge's options, an
        `straggler.integrations.ft.FTOptions` or a dict of its fields (docs/ft.md).
        ``hang_timeout_s`` (``"auto"``, seconds, or None: off; env ``STRAGGLER_HANG_TIMEOUT``)
        and ``hang_action`` (``"none"`` or ``"exit"``): when the job makes no progress for the
        timeout, a rank names the rank(s) the others wait for, with their Python stacks
        (docs/hang.md).

        Raises ValueError naming a bad parameter (TypeError for one of the wrong type; the
        detector stays uninitialized) and RuntimeError when already initialized. A no-op when
        `STRAGGLER_DISABLE=1`, after the arguments are checked; when it is set on some ranks
        only, those tell the others through the job's store, and the API is a no-op on every
        rank (a warning says which rank) instead of a `CommError` after `comm_timeout_s`.
        """
        disabled = disabled_by_env()  # a malformed value raises before anything is built
        if cls._core is not None:
            raise RuntimeError("Detector is already initialized; call Detector.shutdown() first")
        options = DetectorOptions(
            scores_to_compute, gather_on_rank0, profiling_interval, report_time_interval,
            node_name, process_group, per_op_capture=per_op_capture,
            comm_timeout_s=comm_timeout_s, ft_sections=ft_sections,
            timer_capacity=timer_capacity, report_options=report_options,
            ft_options=ft_options, telemetry=telemetry, policy=policy, roles=roles,
            report_log=report_log, prometheus=prometheus, max_names=max_names,
            name_ttl_reports=name_ttl_reports, gpu_sample_interval=gpu_sample_interval,
            collective_waits=collective_waits, hang_timeout_s=hang_timeout_s,
            hang_action=hang_action)
        if disabled:
            log.info("straggler: STRAGGLER_DISABLE is set; the detector does nothing")
            # The peers' initialize would otherwise wait comm_timeout_s for this rank and raise.
            from .dist.comm import Comm

            Comm.decline("has STRAGGLER_DISABLE set", options.process_group)
            return
        from .dist.comm import CommDeclined

        try:
            core = DetectorCore(options)
        except CommDeclined as exc:  # a peer has STRAGGLER_DISABLE set: off here too, no error
            log.warning("%s: the detector is off on every rank", exc)
            cls._declined = str(exc)
            return
        except Exception as exc:
            # A script that catches this (a peer never called initialize: CommError) trains on
            # with the API as no-ops, instead of "not initialized" at its first section.
            cls._declined = f"Detector.initialize() failed: {exc}"
            raise
        cls._declined = None
        cls._core = core
        cls.initialized = True
        cls.scores_to_compute = options.scores_to_compute
        cls.gather_on_rank0 = options.gather_on_rank0
        cls.profiling_interval = options.profiling_interval
        cls.report_time_interval = options.report_time_interval
        cls.custom_sections = core.sections
        cls.reporter = core.cycle.reporter
        cls.report_interval_tracker = core.cycle.tracker

    @classmethod
    def shutdown(cls) -> None:
        """Restore wrapped callables and release everything; initialize() may be called again."""
        core, cls._core = cls._core, None
        cls._declined = None
        cls.initialized = False
        cls.custom_sections = {}
        cls.reporter = cls.report_interval_tracker = None
        if core is not None:
            core.close()

    @classmethod
    def ft_bridge(cls) -> FTBridge | None:
        """The NVRx fault-tolerance `FTBridge` when FT sections are on, else None (docs/ft.md)."""
        core = cls._core
        return core.ft_bridge if core is not None else None

    @classmethod
    def core(cls) -> DetectorCore | None:
        """The live `DetectorCore` (None when not initialized): for integrations and tests."""
        return cls._core

    @classmethod
    def _require(cls) -> DetectorCore | None:
        core = cls._core
        if core is None and cls._declined is None and not disabled_by_env():
            raise RuntimeError("Detector is not initialized. Call Detector.initialize() first, "
                               "on every rank (or set STRAGGLER_DISABLE=1 to run without it)")
        return core

    @classmethod
    def detection_section(cls, name: str | None = None, profile_cuda: bool = True,
                          kind: SectionKind | str = SectionKind.COMPUTE
                          ) -> SectionContext | NullContext:
        """Context manager timing its body as section `name` (default: the `with`'s file:line).

        `kind="communication"` marks a section of collectives: never timed or scored.
        """
        try:  # every step after the first: one lookup, no further call
            s = cls._core.sections[name]  # type: ignore[union-attr,index]  # None: below
            if kind is s.kind:
                if profile_cuda is True:
                    return s.gpu_ctx
                if profile_cuda is False:
                    return s.host_ctx
        except Exception:  # noqa: BLE001 - not initialized, new, unnamed, bad arguments: below
            pass
        core = cls._core
        if core is None:
            cls._require()
            return NULL_CONTEXT
        name = check_name("name", name, optional=True)
        if name is None:
            frame = sys._getframe(1)
            return core.registry.located_section(frame.f_code, frame.f_lineno, profile_cuda,
                                                 kind)
        return core.section(name, profile_cuda, kind)

    @classmethod
    def wrap_callables(cls, callable_ids: Sequence[CallableId], profile_cuda: bool = True) -> None:
        """Run each callable inside a section named `str(callable_id)`; adds to earlier calls."""
        core = cls._require()
        if core is not None:
            core.wrap_callables(callable_ids, profile_cuda)

    @classmethod
    def restore_original_callables(cls) -> None:
        """Put back every callable wrapped so far."""
        core = cls._core
        if core is not None:
            core.restore_original_callables()

    @classmethod
    def add_section_hook(cls, hook: SectionHook) -> None:
        """Call `hook.on_section_enter(name)` before, `on_section_exit(name)` after our timers."""
        core = cls._require()
        if core is not None:
            core.add_hook(hook)

    @classmethod
    def remove_section_hook(cls, hook: SectionHook) -> None:
        """Stop notifying a hook added with `add_section_hook`."""
        core = cls._core
        if core is not None:
            core.remove_hook(hook)

    @classmethod
    def generate_report(cls) -> Report | None:
        """Collective report of the window since the last one; None off the gathering rank."""
        core = cls._require()
        return core.generate_report() if core is not None else None

    @classmethod
    def run_probe(cls) -> dict[int, ProbeResult] | None:
        """Collective GPU health probe: call on every rank of the group together.

        Runs fixed-work kernels (FMA-bound and memory-bound, a few ms) on each rank's GPU and
        returns ``{global rank: straggler.telemetry.probe.ProbeResult}`` on every rank, with
        throughputs relative to the median of the other ranks (`ProbeResult.relative`: 1.0
        typical, 0.6 is 40% slower), whatever the job does. A rank whose probe fails has NaN
        values. None when disabled.
        """
        core = cls._require()
        return core.run_probe() if core is not None else None

    @classmethod
    def generate_report_if_interval_elapsed(cls) -> Report | None:
        """Call once per iteration on every rank: a report when the interval elapsed, else None."""
        core = cls._require()
        return core.generate_report_if_interval_elapsed() if core is not None else None

    @classmethod
    def is_interval_elapsed(cls) -> bool:
        """Whether a report is due on this iteration."""
        core = cls._core
        return core.is_interval_elapsed() if core is not None else False

    @classmethod
    def last_decision(cls) -> Decision | None:
        """The decision of the last report, agreed inside it and the same on every rank.

        A `straggler.reporting.decision.Decision`: ``stragglers`` (global ranks to act on:
        the confirmed verdict by default), ``suspects`` (slow, not confirmed yet), ``act``,
        ``report`` (which report made it). None before the first report or when not
        initialized. Integrations act on it instead of running collectives of their own.
        """
        core = cls._core
        return core.last_decision() if core is not None else None

    @classmethod
    def set_decision_rule(cls, rule: DecisionRule) -> None:
        """Set how reports become decisions (`straggler.reporting.decision.DecisionRule`: the
        verdict, confirmed or NVRx's single-report rule, and its thresholds). The reporting rank's
        rule decides; set the same on every rank."""
        core = cls._require()
        if core is not None:
            core.set_decision_rule(rule)

    @classmethod
    def state_dict(cls) -> dict[str, Any]:
        """The detector state a resumed job needs (individual references, iteration count)."""
        core = cls._require()
        return core.state_dict() if core is not None else {}

    @classmethod
    def load_state_dict(cls, state: dict[str, Any]) -> None:
        """Restore `state_dict()` output; call after initialize()."""
        core = cls._require()
        if core is None:
            return
        if not isinstance(state, dict):
            raise ValueError(f"`state={state!r:.200}` must be a dict from Detector.state_dict()")
        if state:  # {}: the state_dict() of a detector that was not running
            core.load_state_dict(state)
