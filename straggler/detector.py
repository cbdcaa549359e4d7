"""`Detector`: NVRx's class-level API over a `DetectorCore` with an explicit lifetime.

`Detector.initialize(...)` builds one `DetectorCore` (sections, timing engine, per-op capture,
interval tracker, report generator, communicator) and `Detector.shutdown()` closes it; every
other class method forwards to it. Names, parameters and defaults are NVRx's, so migrating is
an import change; our additions are keyword arguments with defaults.

Fail open: an exception raised inside the detector (a driver error, a dead peer, a bug) is
logged once on the ``straggler`` logger, the core disables itself, sections stop timing,
`generate_report*` return None, and the training loop never sees it. The ranks turn off
together (straggler/failopen.py): a failed rank says "off" at the next report instead of
leaving its peers waiting. A forked child's detector is inert (straggler/forksafe.py).
`STRAGGLER_DISABLE=1` turns the whole API into no-ops.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Tuple, Union

from ._checks import check_bool, check_int, check_roles, check_seconds
from .timing.callables import CallableId, CallableWrapper
from .timing.interval import ReportIntervalTracker
from .timing.sections import (NO_GPU, NULL_CONTEXT, UNRESOLVED, Section, SectionContext,
                              SectionHook, SectionKind)
from .analysis.statistics import Statistic

__all__ = ["Detector", "DetectorCore", "TelemetryProvider"]

log = logging.getLogger("straggler")

from ._constants import FT_SECTIONS_MODES  # noqa: E402 - shared with the FT integration
DEFAULT_CAPACITY = 8 * 1024  # samples kept per section / timer, as NVRx
DEFAULT_MAX_NAMES = 2048  # live section names; more are not timed until old ones expire
DEFAULT_NAME_TTL_REPORTS = 2  # a section unused for this many reports is forgotten
# Without per-op capture, one profiled entry in this many is timed on the GPU (events and the
# busy-time observer cost the host ~10 µs and the GPU a bubble per timed op).
DEFAULT_GPU_SAMPLE_INTERVAL = 10
_STAT_ORDER = (Statistic.MIN, Statistic.MAX, Statistic.MED, Statistic.AVG, Statistic.STD,
               Statistic.NUM)  # the engine's first six summary columns


def disabled_by_env() -> bool:
    """`STRAGGLER_DISABLE` set to a true value (1/true/yes/on) turns the API into no-ops."""
    return os.environ.get("STRAGGLER_DISABLE", "").strip().lower() in ("1", "true", "yes", "on")


class TelemetryProvider(Protocol):
    """Contributes a fixed-length vector of telemetry values to every report (e.g. NVML)."""

    fields: Sequence[str]  # names of the values, fixed for the provider's lifetime

    def sample(self) -> Sequence[float]:
        """The window's values: len(fields) floats, NaN where unknown."""
        ...

    def close(self) -> None:
        """Release what the provider holds (threads, libraries); idempotent."""
        ...


# -- configuration ---------------------------------------------------------------------------
def _bad_profile_cuda(value: Any) -> Any:
    check_bool("profile_cuda", value)  # raises: value is neither True nor False


def _check_kind(kind: Any) -> SectionKind:
    try:
        return SectionKind(kind)
    except ValueError:
        raise ValueError(f"`kind={kind!r}` must be one of "
                         f"{[k.value for k in SectionKind]}") from None


def _stream_getter() -> Callable[[], int]:
    """The current torch CUDA stream's raw handle when torch has CUDA, else the null stream 0.

    -1 while the current stream is capturing a CUDA graph: no GPU timing then (our events
    cannot be recorded into a capture). Called once per timed entry, so it uses torch's C
    entry points directly: `torch.cuda.current_stream().cuda_stream` builds a Stream object
    (7.4 us on an H100 host) where the raw handle by device index costs about 0.2 us.
    """
    import torch

    if not torch.cuda.is_available():
        return lambda: 0
    c = torch._C
    raw = getattr(c, "_cuda_getCurrentRawStream", None)
    device = getattr(c, "_cuda_getDevice", None)
    capturing = getattr(c, "_cuda_isCurrentStreamCapturing", None)
    if raw is None or device is None or capturing is None:  # not this torch's C API: public one
        current_stream = torch.cuda.current_stream
        is_capturing = torch.cuda.is_current_stream_capturing
        return lambda: -1 if is_capturing() else current_stream().cuda_stream

    def stream() -> int:
        return -1 if capturing() else raw(device())

    return stream


class DetectorCore:
    """One detector lifetime: built by `Detector.initialize`, closed by `Detector.shutdown`.

    Holds no class-level state, so tests may build and close several in a row.
    """

    def __init__(self, scores_to_compute: Any = "all", gather_on_rank0: bool = True,
                 profiling_interval: int = 1, report_time_interval: float = 60,
                 node_name: Optional[str] = None, process_group: Any = None, *,
                 per_op_capture: bool = False, comm_timeout_s: float = 120.0,
                 ft_sections: str = "auto", timer_capacity: int = DEFAULT_CAPACITY,
                 report_options: Optional[Dict[str, Any]] = None,
                 ft_options: Optional[Dict[str, Any]] = None, telemetry: Any = True,
                 policy: Any = True, roles: Any = None, report_log: Any = None,
                 prometheus: Any = None, max_names: int = DEFAULT_MAX_NAMES,
                 name_ttl_reports: int = DEFAULT_NAME_TTL_REPORTS,
                 gpu_sample_interval: int = DEFAULT_GPU_SAMPLE_INTERVAL) -> None:
        # Validate everything before building anything, so bad input leaves nothing behind.
        from .reporting.generator import check_scores_to_compute

        self.scores_to_compute = check_scores_to_compute(scores_to_compute, allow_name=False)
        self.gather_on_rank0 = check_bool("gather_on_rank0", gather_on_rank0)
        self.profiling_interval = check_int("profiling_interval", profiling_interval)
        self.report_time_interval = check_seconds("report_time_interval", report_time_interval,
                                                  allow_zero=True)
        if node_name is not None and (not isinstance(node_name, str) or not node_name):
            raise ValueError(f"`node_name={node_name!r}` must be a non-empty string or None")
        self.node_name = node_name or socket.gethostname()
        self.per_op_capture = check_bool("per_op_capture", per_op_capture)
        self.gpu_sample_interval = check_int("gpu_sample_interval", gpu_sample_interval)
        # Per-op capture times every profiled entry's ops: its GPU timing is never sampled.
        self.gpu_interval = 1 if self.per_op_capture else self.gpu_sample_interval
        self.comm_timeout_s = check_seconds("comm_timeout_s", comm_timeout_s)
        if ft_sections not in FT_SECTIONS_MODES:
            raise ValueError(f"`ft_sections={ft_sections!r}` must be one of "
                             f"{list(FT_SECTIONS_MODES)}")
        self.ft_sections = ft_sections
        if ft_options is not None and not isinstance(ft_options, dict):
            raise ValueError(f"`ft_options={ft_options!r}` must be a dict or None")
        self.ft_options = dict(ft_options or {})
        self.timer_capacity = check_int("timer_capacity", timer_capacity)
        self.max_names = check_int("max_names", max_names)
        self.name_ttl_reports = check_int("name_ttl_reports", name_ttl_reports)
        if report_options is not None and not isinstance(report_options, dict):
            raise ValueError(f"`report_options={report_options!r}` must be a dict or None")
        self.report_options = dict(report_options or {})
        from .analysis.policy import make_policy

        # The persistence policy behind Report.confirmed (docs/policy.md); None: no policy.
        self.policy = make_policy(policy, roles)
        from .telemetry.nvml import telemetry_options

        self.telemetry_options = telemetry_options(telemetry)  # NVML, causes, probe (telemetry.py)
        from .sinks.observers import make_observers

        # Report log and Prometheus exporter on the reporting rank (observers.py); None: off.
        self.observers = make_observers(report_log, prometheus)
        if process_group is not None:
            import torch.distributed as dist

            if not isinstance(process_group, dist.ProcessGroup):
                raise ValueError(f"`process_group={process_group!r}` must be a "
                                 "torch.distributed.ProcessGroup or None")

        self.enabled = True  # change it through fail()/close(): sections are specialised on it
        # Fail-open state: a failed rank stops timing (enabled False) but keeps joining the
        # report protocol (_leaving) until every rank agreed to stop (_done).
        self._leaving = False
        self._done = False
        self._forked = False
        self._reports = 0  # reports finished: the clock of name expiry
        self._names_lock = threading.Lock()  # section creation (threads may add names)
        self.hooks: List[SectionHook] = []  # change it through add_hook()/remove_hook()
        self.sections: Dict[str, Section] = {}
        self._by_location: Dict[Any, Dict[int, Section]] = {}  # code object -> line -> section
        self.engine: Any = None
        self.capture: Any = None
        self._engine_tried = False
        self._capture_tried = False
        self._gpu_section_timers: Dict[str, None] = {}
        # Busy-mode entries of the last report window that saw no GPU work (no GPU sample).
        self.gpu_idle_entries: Dict[str, int] = {}
        self._warned: set = set()
        self._failed = False
        self.wrapper = CallableWrapper(lambda name, cuda: self.section(name, cuda))
        self.stream: Callable[[], int] = lambda: 0
        self.telemetry: Optional[TelemetryProvider] = None
        self.ft_bridge: Any = None

        from .dist.comm import Comm
        from .reporting.generator import ReportGenerator

        self.comm = Comm.create(process_group=process_group, timeout_s=self.comm_timeout_s,
                                call="Detector.initialize()")
        self._report_calls = 0  # reports attempted, named when a collective times out
        try:
            check_roles(roles, self.comm.global_ranks)
            self.telemetry = self._create_telemetry_provider()
            fields = tuple(self.telemetry.fields) if self.telemetry is not None else ()
            try:
                self.reporter = ReportGenerator(self.scores_to_compute, self.gather_on_rank0,
                                                self.node_name, self.comm,
                                                telemetry_fields=fields, policy=self.policy,
                                                **self.report_options)
            except TypeError as exc:  # an unknown tunable in report_options
                raise ValueError(f"`report_options={self.report_options!r}`: {exc}") from None
            self.annotator = self._create_annotator()
            # Ranks must agree on the report iteration whenever a report communicates: the
            # scores' exchange, or the annotator's probe flag (all_reduce) with probe_suspects.
            self._agree_by_comm = ("relative_perf_scores" in self.scores_to_compute
                                   or self.gather_on_rank0
                                   or self.telemetry_options.probe_suspects)
            self.tracker = ReportIntervalTracker(
                self.report_time_interval, self.profiling_interval,
                reduce_max=self._reduce_max if self._agree_by_comm else None)
            self.ft_bridge = self._create_ft_bridge(self.ft_sections)
            if self.ft_bridge is not None:
                self.hooks.append(self.ft_bridge)
            from .dist.failopen import ReportGate

            self.gate = ReportGate(self.comm)
        except BaseException:
            self._close_quietly()
            raise
        from . import forksafe

        forksafe.track(self)

    # -- plug points for other components --------------------------------------------------
    def _create_ft_bridge(self, mode: str) -> Optional[SectionHook]:
        """FT bridge: the NVRx fault-tolerance section hook, created here for `ft_sections`.

        Returns a `SectionHook` (appended to `self.hooks`) or None. Owned by the FT
        integration (straggler/integrations/ft/, docs/ft.md).
        """
        if mode == "off":
            return None
        from .integrations.ft import create_bridge

        options = dict(self.ft_options)
        # FT timeouts are learned at report points through our communicator: only when every
        # rank of the job reports on the same iteration (else the reduction could not match).
        import torch.distributed as dist

        world = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
        if self._agree_by_comm and self.comm.world_size == world:
            options.setdefault("reduce_max", lambda t: self.comm.all_reduce(t, "max"))
        elif options.get("calc_timeouts", True):
            log.info("straggler: FT timeouts are not learned: the detector's reports do not "
                     "involve every rank of the job")
            options["calc_timeouts"] = False
        return create_bridge(mode, **options)

    def _create_telemetry_provider(self) -> Optional[TelemetryProvider]:
        """Telemetry provider: the per-report vector of device telemetry (NVML), or None."""
        if not self.telemetry_options.enabled:
            return None
        from .telemetry.nvml import NvmlTelemetry

        return NvmlTelemetry(period_s=self.telemetry_options.period_s)

    def _create_annotator(self) -> Callable[[Any], Any]:
        """After each report: GPU identities, the probe on suspects, causes (causes.py)."""
        from .analysis.causes import CauseRules, ReportAnnotator

        opts = self.telemetry_options
        return ReportAnnotator(self.comm, lambda: getattr(self.telemetry, "identity", None),
                               gather=self.gather_on_rank0 and opts.enabled,
                               device=None,  # torch's current device when probing
                               probe_suspects=opts.probe_suspects,
                               rules=opts.rules or CauseRules(),
                               gpu_timing=self.no_gpu_timers_reason)

    def no_gpu_timers_reason(self) -> Optional[str]:
        """Why this rank has no GPU timers so far, for the causes' evidence (None: it has some)."""
        if self._gpu_section_timers or (self.capture is not None and self.capture.timer_names):
            return None
        if not self._engine_tried:
            return "profile_cuda=False on every compute section it ran"
        if self.engine is None:
            return "the timing engine is unavailable on it (see its log)"
        if self.engine.backend != "cuda":
            return f"no usable CUDA device: {self._cuda_status()}"
        return "profile_cuda=False on every compute section it ran"

    def run_probe(self) -> Any:
        """Collective: the GPU health probe on every rank (see `Detector.run_probe`)."""
        if not self.enabled:
            return None
        try:
            from .telemetry.probe import probe_group
            from .telemetry.nvml import _current_cuda_device

            with self.comm.during("Detector.run_probe()"):
                return probe_group(self.comm, _current_cuda_device())
        except Exception as exc:  # noqa: BLE001 - fail open
            self.fail(exc)
            return None

    def add_hook(self, hook: SectionHook) -> None:
        """Call `hook.on_section_enter/exit(name)` around every outermost section entry."""
        if not callable(getattr(hook, "on_section_enter", None)) or \
                not callable(getattr(hook, "on_section_exit", None)):
            raise ValueError(f"`hook={hook!r}` needs on_section_enter(name) and "
                             "on_section_exit(name) methods")
        if hook not in self.hooks:
            self.hooks.append(hook)
            self.specialise_sections()

    def remove_hook(self, hook: SectionHook) -> None:
        """Stop notifying `hook` (a no-op if it is not registered)."""
        if hook in self.hooks:
            self.hooks.remove(hook)
            self.specialise_sections()

    def call_hooks_enter(self, name: str) -> None:
        """`on_section_enter(name)` of every hook; a hook that raises is logged and removed."""
        for hook in tuple(self.hooks):
            try:
                hook.on_section_enter(name)
            except Exception as exc:  # noqa: BLE001 - a broken hook must not break training
                self._drop_hook(hook, exc)

    def call_hooks_exit(self, name: str) -> None:
        """`on_section_exit(name)` of every hook, newest first; a failing hook is removed."""
        for hook in tuple(reversed(self.hooks)):
            try:
                hook.on_section_exit(name)
            except Exception as exc:  # noqa: BLE001
                self._drop_hook(hook, exc)

    def _drop_hook(self, hook: SectionHook, exc: BaseException) -> None:
        log.error("straggler: section hook %r failed and was removed: %s", hook, exc,
                  exc_info=exc)
        self.remove_hook(hook)

    def specialise_sections(self) -> None:
        """Let every section's contexts take the fast path if and only if it is correct now.

        Call after any change of `enabled`, `hooks` or `capture` (the short paths rely on them).
        """
        plain, capture = self.enabled and not self.hooks, self.capture is not None
        for s in self.sections.copy().values():  # a copy: threads may add names
            s.specialise(plain, capture)

    def specialise(self, s: Section) -> None:
        """`specialise_sections` for one section (created, resolved, expired or revived)."""
        s.specialise(self.enabled and not self.hooks, self.capture is not None)

    # -- fail open ---------------------------------------------------------------------------
    def fail(self, exc: BaseException, *, in_report: bool = False) -> None:
        """Log once, then disable: sections stop timing and reports return None.

        Outside a report, the rank keeps joining the report protocol and says "off" at the next
        report, where every rank turns off together (straggler/failopen.py). Inside a report
        (its collectives started), the communicator is closed at once so that the peers' pending
        collective fails now instead of after ``comm_timeout_s``.
        """
        self.enabled = False
        if self.capture is not None:
            self.capture.enabled = False
        self.specialise_sections()
        if in_report or not self._agree_by_comm_safe():
            self._stop_reporting()
        else:
            self._leaving = True
        if not self._failed:
            self._failed = True
            log.error("straggler: internal error, straggler detection is disabled for the rest "
                      "of this run (training continues): %s: %s", type(exc).__name__, exc,
                      exc_info=exc)

    def _agree_by_comm_safe(self) -> bool:
        return getattr(self, "_agree_by_comm", False) and not self._done

    def _stop_reporting(self) -> None:
        """Leave the report protocol for good; peers blocked on us fail at once (gloo)."""
        self.enabled = False
        self._leaving = False
        self._done = True
        self.specialise_sections()
        comm = getattr(self, "comm", None)
        if comm is not None and not self._forked:
            try:
                comm.close()
            except Exception:  # noqa: BLE001 - best effort
                pass

    def forget_after_fork(self) -> None:
        """In a forked child: inert. Native objects are kept, never stopped (forksafe.py)."""
        from .forksafe import keep_forever

        self._forked = True
        self.enabled = False
        self._leaving = False
        self._done = True
        self.specialise_sections()
        keep_forever(self.engine)
        keep_forever(getattr(self.telemetry, "_sampler", None))
        keep_forever(self.telemetry)
        comm = getattr(self, "comm", None)
        keep_forever(getattr(comm, "_backend", None))
        keep_forever(comm)
        keep_forever(self.capture)

    def warn_once(self, key: str, msg: str, *args: Any) -> None:
        """Log `msg % args` as a warning the first time `key` is seen."""
        if key not in self._warned:
            self._warned.add(key)
            log.warning(msg, *args)

    # -- sections ----------------------------------------------------------------------------
    def section(self, name: str, profile_cuda: bool = True,
                kind: Union[SectionKind, str] = SectionKind.COMPUTE) -> SectionContext:
        """The reusable context of section `name` (created on first use)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"`name={name!r}` must be a non-empty string or None")
        s = self.sections.get(name)
        if s is None:
            s = self._new_section(name, kind)
            if s is None:
                return NULL_CONTEXT
        elif kind is not s.kind and kind != s.kind:
            raise ValueError(f"`kind={kind!r}` differs from section {name!r}'s kind "
                             f"{s.kind.value!r}")
        if profile_cuda is True:
            return s.gpu_ctx
        return s.host_ctx if profile_cuda is False else _bad_profile_cuda(profile_cuda)

    def located_section(self, code: Any, line: int, profile_cuda: bool,
                        kind: Union[SectionKind, str]) -> SectionContext:
        """The section named after a `with` statement's `file:line` (cached per location)."""
        by_line = self._by_location.get(code)
        s = by_line.get(line) if by_line is not None else None
        if s is None:
            s = self.sections.get(f"{code.co_filename}:{line}")
            if s is None:
                s = self._new_section(f"{code.co_filename}:{line}", kind)
                if s is None:
                    return NULL_CONTEXT
            s.location = (code, line)
            self._by_location.setdefault(code, {})[line] = s
        elif kind is not s.kind and kind != s.kind:
            raise ValueError(f"`kind={kind!r}` differs from section {s.name!r}'s kind "
                             f"{s.kind.value!r}")
        if profile_cuda is True:
            return s.gpu_ctx
        return s.host_ctx if profile_cuda is False else _bad_profile_cuda(profile_cuda)

    def _new_section(self, name: Any, kind: Any) -> Optional[Section]:
        """A new registered section; None when `max_names` live names are in use (logged once).

        Thread-safe: two threads adding the same name get one section.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"`name={name!r}` must be a non-empty string or None")
        kind = _check_kind(kind)
        with self._names_lock:
            s = self.sections.get(name)
            if s is not None:
                return s
            if len(self.sections) >= self.max_names:
                self.warn_once("max-names", "straggler: %d section names are in use "
                               "(max_names); new names are not timed until names unused for "
                               "%d reports expire (first refused: %r)", self.max_names,
                               self.name_ttl_reports, name)
                return None
            s = Section(self, name, kind, self.profiling_interval, self.timer_capacity,
                        self.gpu_interval)
            s.seen = s.entered_report = self._reports
            self.specialise(s)
            self.sections[name] = s  # readers iterate a copy (dict.copy() holds the GIL)
        return s

    def revive(self, s: Section) -> None:
        """A held context of an expired section was entered again: register it anew."""
        with self._names_lock:
            if not s.expired:
                return
            if self.sections.get(s.name) is None and len(self.sections) < self.max_names:
                s.expired = False
                s.seen = s.entered_report = self._reports
                self.sections[s.name] = s
        self.specialise(s)  # back on the short paths (the GPU one once its timer is resolved)

    def _expire_names(self) -> None:
        """Forget sections unused for `name_ttl_reports` reports (called at each report)."""
        now = self._reports
        ttl = self.name_ttl_reports
        stale = []
        for name, s in self.sections.copy().items():
            if now - s.seen >= ttl and s.depth == 0:  # seen: set by _new_window
                stale.append(name)
        if not stale:
            return
        with self._names_lock:
            sections = self.sections
            for name in stale:
                s = sections.pop(name, None)
                if s is None or s.depth:  # entered meanwhile: keep it
                    if s is not None:
                        sections[name] = s
                    continue
                s.expired = True
                s.timer_id = UNRESOLVED  # looked up again (and re-registered) on next use
                self.specialise(s)  # the general path revives it
                self._gpu_section_timers.pop(name, None)
                if s.location is not None:
                    code, line = s.location
                    by_line = self._by_location.get(code)
                    if by_line is not None and by_line.get(line) is s:
                        del by_line[line]
                        if not by_line:
                            del self._by_location[code]

    def _ensure_engine(self) -> Any:
        """The timing engine, created on first need (after the user set the device).

        None when the extension cannot make one (logged once): sections then time the host.
        """
        if not self._engine_tried:
            self._engine_tried = True
            try:
                import torch

                from . import _core

                device = torch.cuda.current_device() if torch.cuda.is_available() else 0
                self.engine = _core.TimerEngine(backend="auto", capacity=self.timer_capacity,
                                                device=device)
            except Exception as exc:  # noqa: BLE001 - no engine: host time only
                self.warn_once("no-engine", "straggler: the timing engine is unavailable "
                               "(%s: %s); sections are timed on the host only",
                               type(exc).__name__, exc)
                return None
            if self.engine.backend == "cuda":
                self.stream = _stream_getter()
        return self.engine

    def resolve_gpu_timer(self, s: Section) -> int:
        """Engine timer id for a section's GPU busy time, or NO_GPU (host time only).

        Called on a section's first profiled entry with profile_cuda. The timer is in busy mode
        (docs/engine.md, "Busy time"): its sample is the GPU time of the section's ops, without
        host stalls, idle gaps or collectives; an entry without GPU work stores none. With
        per-op capture on, the per-op timers replace the section timers in GPU scores.
        """
        tid = self._resolve_gpu_timer(s)
        self.specialise(s)
        return tid

    def _resolve_gpu_timer(self, s: Section) -> int:
        s.timer_id = NO_GPU
        if s.kind is not SectionKind.COMPUTE:
            return NO_GPU
        engine = self._ensure_engine()
        if engine is None:
            return NO_GPU
        if engine.backend != "cuda" and not self.per_op_capture:
            self.warn_once("host-only", "straggler: no usable CUDA device (%s); sections are "
                           "timed on the host only", self._cuda_status())
            return NO_GPU
        if self.capture is None and not self._capture_tried:
            self._capture_tried = True
            self._start_capture(engine)
        s.timer_id = engine.timer_id(s.name)
        engine.set_busy(s.timer_id)
        self._gpu_section_timers[s.name] = None
        return s.timer_id

    @staticmethod
    def _cuda_status() -> str:
        try:
            from . import _core

            return _core.cuda_status()[1]
        except Exception as exc:  # noqa: BLE001 - only for a log line
            return f"{type(exc).__name__}: {exc}"

    def _start_capture(self, engine: Any) -> None:
        """The op observer: per-op timers if asked, else busy time of sections only.

        Sections-only without the C++ observer (`straggler._ops` not built): no observer (the
        Python one costs too much per op); a section then gets a GPU sample only when the GPU
        never caught up with it (busy from its start to its stop), see docs/engine.md.
        """
        from .timing.capture import OpCapture, native_observer_available

        if engine.backend != "cuda":
            log.info("straggler: per-op capture times ops with the host clock (%s)",
                     self._cuda_status())
        from . import _core

        # The C++ observer calls a real engine through its address (tests use fakes).
        native = native_observer_available() and isinstance(engine, _core.TimerEngine)
        if not self.per_op_capture and not native:
            log.info("straggler: straggler._ops is not built for this torch: GPU samples come "
                     "only from sections the GPU was busy throughout")
            return
        try:
            self.capture = OpCapture(engine, lambda: self.stream(), self.fail,
                                     per_op=self.per_op_capture, native=native)
        except Exception as exc:  # noqa: BLE001 - the Python observer, or none
            self.warn_once("no-observer", "straggler: the op observer failed to start (%s: %s)",
                           type(exc).__name__, exc)
            if self.per_op_capture:
                self.capture = OpCapture(engine, lambda: self.stream(), self.fail,
                                         per_op=True, native=False)
        self.specialise_sections()

    # -- callables -----------------------------------------------------------------------------
    def wrap_callables(self, callable_ids: Sequence[CallableId], profile_cuda: bool = True) -> None:
        """See `Detector.wrap_callables`."""
        self.wrapper.wrap(callable_ids, check_bool("profile_cuda", profile_cuda))

    def restore_original_callables(self) -> None:
        """See `Detector.restore_original_callables`."""
        self.wrapper.restore()

    # -- reports ------------------------------------------------------------------------------
    def _reduce_max(self, value: float) -> float:
        """MAX of `value` over the group (one small collective; the interval's first estimate)."""
        import torch

        call = (f"Detector.generate_report_if_interval_elapsed() (iteration "
                f"{self.tracker.current_iter}: the first estimate of the report interval)")
        with self.comm.during(call):
            reduced = self.comm.all_reduce(torch.tensor([value], dtype=torch.float64), "max")
        return float(reduced[0])

    def section_summaries(self) -> Dict[str, Dict[Statistic, float]]:
        """This window's host-time statistics (ms) of every section with samples."""
        import numpy as np

        out: Dict[str, Dict[Statistic, float]] = {}
        for name, s in self.sections.copy().items():  # a copy: threads may add names
            if not s.samples:
                continue
            a = np.array(tuple(s.samples), dtype=np.float64)  # a snapshot (other threads append)
            a *= 1e-6  # ns -> ms
            n = a.size
            out[name] = {
                Statistic.MIN: float(a.min()), Statistic.MAX: float(a.max()),
                Statistic.MED: float(np.median(a)), Statistic.AVG: float(a.mean()),
                Statistic.STD: float(a.std(ddof=1)) if n > 1 else math.nan,
                Statistic.NUM: float(n)}
        return out

    def gpu_summaries(self) -> Dict[str, Dict[Statistic, float]]:
        """This window's GPU timer statistics (ms) of the timers that feed GPU scores.

        All are busy time (docs/engine.md): GPU time of the sections' ops, without host stalls,
        idle gaps or collectives. With per-op capture on: the per-op compute timers; otherwise
        the busy timers of compute sections and wrapped callables. A section whose entries
        launched no GPU work has no row (counted in `gpu_idle_entries`).
        """
        engine = self.engine
        if engine is None:
            return {}
        engine.flush()  # waits for our own events only; never a device synchronize
        names, values = engine.summaries()
        idle = getattr(engine, "idle_entries", None)  # test doubles may lack it
        self.gpu_idle_entries = {n: int(c) for n, c in (idle() if idle else {}).items()
                                 if n in self._gpu_section_timers}
        per_op = self.capture is not None and self.capture.per_op
        keep = self.capture.timer_names if per_op else self._gpu_section_timers
        out: Dict[str, Dict[Statistic, float]] = {}
        for i, name in enumerate(names):
            if name in keep:
                row = values[i]
                out[name] = {stat: float(row[j]) for j, stat in enumerate(_STAT_ORDER)}
        return out

    def generate_report(self, _call: str = "Detector.generate_report()") -> Any:
        """Collective: every rank of the group calls it on the same iteration."""
        if self._done or not (self.enabled or self._leaving):
            return None
        self._report_calls += 1
        self.comm.call = f"{_call} (report {self._report_calls})"  # named if a collective fails
        try:
            start_s = time.perf_counter()
            sections = self.section_summaries()
            gpu = self.gpu_summaries()
            telemetry = self.telemetry.sample() if self.telemetry is not None else None
        except Exception as exc:  # noqa: BLE001 - fail open: say "off" at the gate below
            self.fail(exc)
        if self._agree_by_comm and not self._done:
            try:
                on = self.gate.agree(self.enabled)
            except Exception as exc:  # noqa: BLE001 - a dead or stuck peer
                self.fail(exc, in_report=True)
                return None
            if not on:
                if self.enabled:
                    log.warning("straggler: rank %d turned straggler detection off after an "
                                "internal error; it is off on every rank of the group for the "
                                "rest of this run (training continues)", self.gate.failed_rank)
                self._stop_reporting()
                return None
        if not self.enabled:
            return None
        try:
            if self._agree_by_comm:
                # The interval is re-agreed on the report's own collective: each rank's wish
                # (-1: none yet) rides along, the group's MAX comes back in last_extra_max.
                wish = self.tracker.local_estimate()
                extra: Optional[List[float]] = [wish if math.isfinite(wish) else -1.0]
            else:
                extra = None  # reports need no communication: nor does the interval
            report = self.reporter.generate_report(sections, gpu, telemetry=telemetry,
                                                   extra=extra)
            report = self.annotator(report)  # GPU identities and causes (collective)
            if report is not None and self.observers is not None:  # never raises
                self.observers.emit(report, iteration=self.tracker.current_iter,
                                    report_ms=(time.perf_counter() - start_s) * 1e3,
                                    sections=len(sections), gpu_timers=len(gpu))
            if extra is None:
                agreed = self.tracker.local_estimate()
            else:
                agreed = (self.reporter.last_extra_max or (-1.0,))[0]
            self.tracker.agree(agreed if agreed > 0 else math.nan)
            self._new_window()
            if self.ft_bridge is not None:
                self.ft_bridge.on_report()  # learns FT timeouts; never raises
            return report
        except Exception as exc:  # noqa: BLE001 - fail open
            self.fail(exc, in_report=True)
            return None

    def _new_window(self) -> None:
        """Start the next window: clear samples, note which sections were used, expire names.

        The first profiled GPU entry of each section in the new window is a GPU sample (then
        every `gpu_sample_interval`-th), so a short window still has GPU time.

        The short paths keep no entry count and no report number (a cost per entry): a section
        was used in the window if it has samples or its general-path count moved; a section
        not open now gets the new report number, so that only an entry left open across this
        report looks like a leak to the same thread's next entry (sections.py).
        """
        self._reports += 1
        now = self._reports
        for s in self.sections.copy().values():
            if s.samples or s.count != s.seen_count:
                s.seen, s.seen_count = now, s.count
            s.samples.clear()
            s.gpu_left = 0  # every window gets a GPU sample: its first profiled GPU entry
            if not s.depth:
                s.entered_report = now
        if self.engine is not None:
            self.engine.reset()
        self._expire_names()

    def generate_report_if_interval_elapsed(self) -> Any:
        """Count one iteration; the report when it is due (collective), else None.

        A rank that failed keeps counting (the interval's first estimate is a collective) and
        joins the next report to say "off" (see `fail`).
        """
        if self._done or not (self.enabled or self._leaving):
            return None
        try:
            self.tracker.iter_increase()
        except Exception as exc:  # noqa: BLE001 - e.g. the estimate's collective failed
            self.fail(exc, in_report=True)
            return None
        if self.tracker.is_interval_elapsed():
            return self.generate_report("Detector.generate_report_if_interval_elapsed() on "
                                        f"iteration {self.tracker.current_iter}")
        return None

    def is_interval_elapsed(self) -> bool:
        """Whether a report is due on this iteration (False once disabled)."""
        return (self.enabled or self._leaving) and self.tracker.is_interval_elapsed()

    # -- persistence ----------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, Any]:
        """What a resumed job needs: the individual references and the iteration count."""
        return {"version": 1, "reporter": self.reporter.state_dict(),
                "interval": self.tracker.state_dict()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore `state_dict()` output; ValueError when `state` is not one."""
        if not isinstance(state, dict) or state.get("version") != 1:
            raise ValueError(f"`state={state!r}` is not a Detector.state_dict() of version 1")
        self.reporter.load_state_dict(state["reporter"])
        self.tracker.load_state_dict(state["interval"])

    # -- lifetime -------------------------------------------------------------------------------
    def close(self) -> None:
        """Restore callables, leave capture, close the engine, telemetry and communicator.

        A no-op in a forked child (the parent's threads and contexts are not ours to stop).
        """
        self.enabled = False
        self._leaving = False
        self.specialise_sections()
        if self._forked:
            return
        self._close_quietly()

    def _close_quietly(self) -> None:
        steps: List[Tuple[str, Callable[[], None]]] = [
            ("callables", self.wrapper.restore),
            ("capture", lambda: self.capture is not None and self.capture.close()),
            ("engine", lambda: self.engine is not None and self.engine.close()),
            ("telemetry", lambda: self.telemetry is not None and self.telemetry.close()),
            ("ft bridge", lambda: callable(getattr(self.ft_bridge, "close", None))
             and self.ft_bridge.close()),
            ("comm", lambda: getattr(self, "comm", None) is not None and self.comm.close()),
            ("observers", lambda: getattr(self, "observers", None) is not None
             and self.observers.close()),
        ]
        for what, step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - shutdown must finish
                log.warning("straggler: closing the %s failed: %s", what, exc)
        self.hooks.clear()


class Detector:
    """Straggler detector, used through class methods (NVRx-compatible singleton).

    ``Detector.initialize(...)`` once per process (on every rank of the group), then wrap
    step code in ``with Detector.detection_section("name"):`` and call
    ``Detector.generate_report_if_interval_elapsed()`` once per iteration on every rank.
    """

    initialized: bool = False
    _core: Optional[DetectorCore] = None
    # NVRx exposes these as class attributes; kept in sync by initialize()/shutdown().
    scores_to_compute: List[str] = []
    gather_on_rank0: bool = True
    profiling_interval: int = 1
    report_time_interval: float = 60.0
    custom_sections: Dict[str, Section] = {}

    def __init__(self) -> None:
        raise RuntimeError("class Detector should not be instantiated")

    @classmethod
    def initialize(cls, scores_to_compute: Union[str, Sequence[str]] = "all",
                   gather_on_rank0: bool = True, profiling_interval: int = 1,
                   report_time_interval: float = 60, node_name: Optional[str] = None,
                   process_group: Any = None, *, per_op_capture: bool = False,
                   comm_timeout_s: float = 120.0, ft_sections: str = "auto",
                   timer_capacity: int = DEFAULT_CAPACITY,
                   report_options: Optional[Dict[str, Any]] = None,
                   ft_options: Optional[Dict[str, Any]] = None, telemetry: Any = True,
                   policy: Any = True, roles: Any = None, report_log: Any = None,
                   prometheus: Any = None, max_names: int = DEFAULT_MAX_NAMES,
                   name_ttl_reports: int = DEFAULT_NAME_TTL_REPORTS,
                   gpu_sample_interval: int = DEFAULT_GPU_SAMPLE_INTERVAL) -> None:
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
        on every n-th profiled entry only (docs/detector.md, "GPU sampling").

        Raises ValueError naming a bad parameter (the detector stays uninitialized) and
        RuntimeError when already initialized. A no-op when `STRAGGLER_DISABLE=1`.
        """
        if disabled_by_env():
            log.info("straggler: STRAGGLER_DISABLE is set; the detector does nothing")
            return
        if cls._core is not None:
            raise RuntimeError("Detector is already initialized; call Detector.shutdown() first")
        core = DetectorCore(scores_to_compute, gather_on_rank0, profiling_interval,
                            report_time_interval, node_name, process_group,
                            per_op_capture=per_op_capture, comm_timeout_s=comm_timeout_s,
                            ft_sections=ft_sections, timer_capacity=timer_capacity,
                            report_options=report_options, ft_options=ft_options,
                            policy=policy, roles=roles,
                            telemetry=telemetry, report_log=report_log,
                            prometheus=prometheus, max_names=max_names,
                            name_ttl_reports=name_ttl_reports,
                            gpu_sample_interval=gpu_sample_interval)
        cls._core = core
        cls.initialized = True
        cls.scores_to_compute = core.scores_to_compute
        cls.gather_on_rank0 = core.gather_on_rank0
        cls.profiling_interval = core.profiling_interval
        cls.report_time_interval = core.report_time_interval
        cls.custom_sections = core.sections

    @classmethod
    def shutdown(cls) -> None:
        """Restore wrapped callables and release everything; initialize() may be called again."""
        core, cls._core = cls._core, None
        cls.initialized = False
        cls.custom_sections = {}
        if core is not None:
            core.close()

    @classmethod
    def ft_bridge(cls) -> Any:
        """The NVRx fault-tolerance `FTBridge` when FT sections are on, else None (docs/ft.md)."""
        core = cls._core
        return core.ft_bridge if core is not None else None

    @classmethod
    def core(cls) -> Optional[DetectorCore]:
        """The live `DetectorCore` (None when not initialized): for integrations and tests."""
        return cls._core

    @classmethod
    def _require(cls) -> Optional[DetectorCore]:
        core = cls._core
        if core is None and not disabled_by_env():
            raise RuntimeError("Detector is not initialized.")
        return core

    @classmethod
    def detection_section(cls, name: Optional[str] = None, profile_cuda: bool = True,
                          kind: Union[SectionKind, str] = SectionKind.COMPUTE) -> Any:
        """Context manager timing its body as section `name` (default: the `with`'s file:line).

        `kind="communication"` marks a section of collectives: never timed or scored.
        """
        try:  # every step after the first: one lookup, no further call
            s = cls._core.sections[name]  # type: ignore[index]  # None: KeyError, below
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
        if name is None:
            frame = sys._getframe(1)
            return core.located_section(frame.f_code, frame.f_lineno, profile_cuda, kind)
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
    def generate_report(cls) -> Any:
        """Collective report of the window since the last one; None off the gathering rank."""
        core = cls._require()
        return core.generate_report() if core is not None else None

    @classmethod
    def run_probe(cls) -> Any:
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
    def generate_report_if_interval_elapsed(cls) -> Any:
        """Call once per iteration on every rank: a report when the interval elapsed, else None."""
        core = cls._require()
        return core.generate_report_if_interval_elapsed() if core is not None else None

    @classmethod
    def is_interval_elapsed(cls) -> bool:
        """Whether a report is due on this iteration."""
        core = cls._core
        return core.is_interval_elapsed() if core is not None else False

    @classmethod
    def state_dict(cls) -> Dict[str, Any]:
        """The detector state a resumed job needs (individual references, iteration count)."""
        core = cls._require()
        return core.state_dict() if core is not None else {}

    @classmethod
    def load_state_dict(cls, state: Dict[str, Any]) -> None:
        """Restore `state_dict()` output; call after initialize()."""
        core = cls._require()
        if core is None:
            return
        if not isinstance(state, dict):
            raise ValueError(f"`state={state!r:.200}` must be a dict from Detector.state_dict()")
        if state:  # {}: the state_dict() of a detector that was not running
            core.load_state_dict(state)
