"""Detection sections: the context manager a training loop enters every step.

Hot path. One `Section` per name holds the state; two `SectionContext` objects per section
(with and without GPU timing) are created once and reused for every entry, so entering a
section allocates nothing but the host-time sample. Only the outermost entry of a section is
timed (recursion and re-entry are counted once). Every `profiling_interval`-th outermost entry
is profiled, the first one always. Of the profiled entries of a GPU context, every
`gpu_interval`-th (the detector's `gpu_sample_interval`; 1 with per-op capture) is also timed
on the GPU (engine pair and op observer), counting from the first one of each report window;
the others are timed on the host only and cost what a host section costs.

Each context is specialised for the detector's current state by switching its class (the
object users hold stays the same): in the common case (detector enabled, no hooks, every entry
profiled, a compute section) `_HostContext` or `_GpuContext` (with or without the op
observer) run a short path; otherwise (and for an expired section, which the general path
registers again) `SectionContext` runs the general one.
`Section.specialise` picks the class; the detector calls it whenever that state changes. The
stream is read once per entry and the stop is recorded on the stream the start used.

Order on a profiled entry: section hooks' `on_section_enter`, then GPU timer start, per-op
capture, host clock; on exit the reverse, and `on_section_exit` after our timers stopped.
Exceptions raised by the body propagate untouched and that entry records no sample: its host
sample is dropped and its GPU timer cancelled (`TimerEngine.cancel`: closed, nothing stored);
exceptions raised by the detector itself go to `owner.fail()`, never into the loop.

A section talks to two narrow collaborators, typed below: its `SectionOwner` (the section
registry: report count, hooks, on/off, fail open) and its `GpuTimer` (engine, stream getter,
op observer: straggler/timing/gpu.py).

Unbalanced use is logged once per section name and recovered from: an exit without an entry is
ignored; a section entered and never exited (e.g. `__enter__` called by hand) is reset when the
same thread enters it again after a report boundary: the leaked entry is dropped (untimed) and
the new entry is timed as an outermost one. Nesting that spans a report from the same thread is
thereby treated as a leak, which real code does not do (a section does not recurse into itself
across a report).
"""

from __future__ import annotations

import collections
import enum
import threading
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any, Literal, Protocol

__all__ = ["SectionKind", "Section", "SectionContext", "NullContext", "SectionHook",
           "SectionOwner", "GpuTimer", "UNRESOLVED", "NO_GPU", "NULL_CONTEXT", "set_gap_note"]

_gap_note: Callable[[int, int], object] | None = None
"""Called with (start_ns, stop_ns) at every timed outermost exit of a section whose every entry
is timed: the collective observer takes the section's time off the rank's own time
(straggler.timing.collectives, docs/culprits.md). None: nobody listens."""


def set_gap_note(note: Callable[[int, int], object] | None) -> None:
    """Hand every timed section's (start_ns, stop_ns) to ``note`` from now on (None: stop)."""
    global _gap_note  # noqa: PLW0603 (the hot path reads it with one global load)
    _gap_note = note


class SectionKind(str, enum.Enum):
    """What a section contains; decides whether its GPU time may feed GPU scores.

    COMPUTE (default): timed on host and GPU; the GPU timer feeds GPU scores unless per-op
    capture is on (then only the per-op compute timers do). COMMUNICATION: a section that is
    mostly collectives (an explicit gradient all-reduce, a ZeRO gather): it runs its hooks and
    counts entries but is never timed or scored, and per-op capture pauses inside it, because
    a collective lasts longest on the ranks that wait for the straggler.
    """

    COMPUTE = "compute"
    COMMUNICATION = "communication"


class SectionHook(Protocol):
    """Notified around every outermost section entry (e.g. NVRx fault-tolerance sections)."""

    def on_section_enter(self, name: str) -> None:
        """Called before the section's timers start."""
        ...

    def on_section_exit(self, name: str) -> None:
        """Called after the section's timers stopped."""
        ...


class SectionOwner(Protocol):
    """What a section needs of the detector: the section registry (straggler/timing/registry.py).
    """

    reports: int  # reports finished so far: a leaked entry is one open across a report
    hooks: list[SectionHook]
    enabled: bool  # False once failed or closed: entries only count and run hooks

    def call_hooks_enter(self, name: str) -> None:
        """Every hook's `on_section_enter(name)`."""
        ...

    def call_hooks_exit(self, name: str) -> None:
        """Every hook's `on_section_exit(name)`, newest first."""
        ...

    def revive(self, s: Section) -> None:
        """Register the expired section `s` again (a held context was entered)."""
        ...

    def specialise(self, s: Section) -> None:
        """Give `s`'s contexts the fastest class that is correct now."""
        ...

    def fail(self, exc: BaseException) -> None:
        """Fail open: log once and disable detection; never raises."""
        ...

    def warn_once(self, key: str, msg: str, *args: Any) -> object:
        """Log `msg % args` as a warning the first time `key` is seen (straggler._log.WarnOnce).
        """
        ...


class GpuTimer(Protocol):
    """What a section needs for GPU timing (straggler/timing/gpu.py `GpuTiming`)."""

    engine: Any  # straggler._core.TimerEngine (or a test double); None before the first need
    capture: Any  # the op observer (straggler/timing/capture.py `OpCapture`) or None
    stream: Callable[[], int]  # the current stream's handle; -1 while a CUDA graph is captured

    def timer_for(self, name: str, kind: SectionKind) -> int:
        """The engine timer id of section `name`'s GPU time, or NO_GPU."""
        ...


# Section.timer_id values that are not engine ids.
UNRESOLVED = -1  # GPU timer not looked up yet
NO_GPU = -2      # no GPU timing for this section (host backend, or communication)

# Section.profiled bits for the entry in progress.
_HOST = 1
_GPU = 2
_OPS = 4
_PAUSED = 8
_HOST_GPU = _HOST | _GPU
_HOST_GPU_OPS = _HOST | _GPU | _OPS


class Section:
    """State of one named detection section (shared by its two contexts)."""

    __slots__ = ("name", "kind", "interval", "count", "depth", "profiled", "start_ns",
                 "stream", "samples", "timer_id", "gpu_ctx", "host_ctx", "gpu_interval",
                 "gpu_left", "seen", "seen_count", "expired", "location", "entered_report",
                 "thread", "step_mark")

    def __init__(self, owner: SectionOwner, gpu: GpuTimer, name: str, kind: SectionKind,
                 interval: int, capacity: int, gpu_interval: int = 1) -> None:
        self.name = name
        self.kind = kind
        self.interval = interval
        self.count = 0      # outermost entries on the general path (profiling_interval)
        self.depth = 0      # current nesting of this section
        self.profiled = 0   # _HOST|_GPU|_OPS|_PAUSED bits of the entry in progress
        self.start_ns = 0
        self.stream = 0     # the stream the GPU timer of the entry in progress started on
        self.samples: collections.deque[int] = collections.deque(maxlen=capacity)  # host ns
        self.timer_id = UNRESOLVED
        # GPU timing (engine pair and op observer) on every `gpu_interval`-th profiled entry of
        # the GPU context, the first one always; `gpu_left` entries to go before the next one.
        self.gpu_interval = gpu_interval
        self.gpu_left = 0
        self.gpu_ctx = SectionContext(owner, gpu, self, True)
        self.host_ctx = SectionContext(owner, gpu, self, False)
        # Name expiry (SectionRegistry.new_window, expire_names): the report it was last seen
        # used at, `count` then, whether it was forgotten, and its `with` location for unnamed
        # sections.
        self.seen = 0
        self.seen_count = 0
        self.expired = False
        self.location: Any = None
        # Leak detection: the owner's report count when the entry in progress began (the
        # general path sets it at entry; each report sets it on sections not open then, which
        # covers the short paths), and the thread of the latest outermost entry (every path).
        self.entered_report = 0
        self.thread = 0
        # Called at each outermost entry (general path): the step mark of a job that marks no
        # steps itself, on its loop's first section (straggler.timing.collectives.SectionSteps).
        self.step_mark: Callable[[], object] | None = None

    def specialise(self, plain: bool, capture: bool) -> None:
        """Give both contexts the fastest class that is correct now.

        `plain`: the detector is enabled and has no hooks; `capture`: an op observer is on
        (profiled GPU entries open and close it). Safe at any time, even inside an entry: a
        `with` keeps the `__exit__` of the class that entered, and each short exit checks that
        its own enter began the entry.
        """
        # An expired section re-registers on the general path, and step marks are made there.
        fast = (plain and self.interval == 1 and self.kind is SectionKind.COMPUTE
                and not self.expired and self.step_mark is None)
        self.host_ctx.__class__ = _HostContext if fast else SectionContext
        tid = self.timer_id
        if not fast or tid == UNRESOLVED:
            cls: type = SectionContext  # the general path resolves the timer on first entry
        elif tid >= 0:
            cls = _GpuContext  # with or without the op observer
        else:
            cls = SectionContext if capture else _HostContext
        self.gpu_ctx.__class__ = cls


class SectionContext:
    """`with` target for one section; reusable and re-entrant (same thread)."""

    __slots__ = ("_owner", "_gpu", "_s", "_cuda")

    def __init__(self, owner: SectionOwner, gpu: GpuTimer, section: Section,
                 profile_cuda: bool) -> None:
        self._owner = owner
        self._gpu = gpu
        self._s = section
        self._cuda = profile_cuda

    @property
    def name(self) -> str:
        """The section's name."""
        return self._s.name

    def __enter__(self) -> None:
        s = self._s
        owner = self._owner
        if s.depth and s.entered_report != owner.reports and s.thread == _get_ident():
            _drop_leaked_entry(owner, self._gpu, s)
        s.depth += 1
        if s.depth != 1:
            return None
        s.entered_report = owner.reports
        s.thread = _get_ident()
        if s.step_mark is not None:
            try:
                s.step_mark()
            except Exception as exc:  # noqa: BLE001 - fail open, never into the training loop
                s.step_mark = None
                owner.fail(exc)
        if owner.hooks:
            owner.call_hooks_enter(s.name)
        if not owner.enabled:
            return None
        try:
            n = s.count
            s.count = n + 1
            if n % s.interval:
                return None
            if s.expired:  # a held context of a forgotten section: register it again
                owner.revive(s)
            gpu = self._gpu
            if s.kind is SectionKind.COMMUNICATION:
                cap = gpu.capture
                if cap is not None:
                    cap.pause()
                    s.profiled = _PAUSED
                return None
            mode = _HOST
            if self._cuda:
                tid = s.timer_id
                if tid == UNRESOLVED:
                    tid = s.timer_id = gpu.timer_for(s.name, s.kind)
                    owner.specialise(s)
                left = s.gpu_left
                if left:  # not a GPU sample: host time only
                    s.gpu_left = left - 1
                else:
                    s.gpu_left = s.gpu_interval - 1
                    if tid >= 0:
                        stream = gpu.stream()
                        if stream >= 0:  # -1: a CUDA graph is being captured, no GPU timing
                            gpu.engine.start(tid, stream)
                            s.stream = stream
                            mode |= _GPU
                        else:  # the GPU sample is taken on the next entry instead
                            s.gpu_left = 0
                    cap = gpu.capture
                    if cap is not None:
                        s.profiled = mode  # so that a failing push() still stops the GPU timer
                        cap.push()
                        mode |= _OPS
            s.profiled = mode
            s.start_ns = perf_counter_ns()
        except Exception as exc:  # noqa: BLE001 - fail open, never into the training loop
            owner.fail(exc)
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        s = self._s
        if s.depth == 0:  # unbalanced exit: ignore rather than corrupt the state
            self._owner.warn_once(f"unbalanced-exit:{s.name}", "straggler: section %r was "
                                  "exited without being entered; the exit is ignored", s.name)
            return False
        s.depth -= 1
        if s.depth:
            return False
        mode = s.profiled
        if mode:
            stop_ns = perf_counter_ns()
            s.profiled = 0
            gpu = self._gpu
            try:
                if mode & _PAUSED:
                    gpu.capture.resume()
                if mode & _OPS:
                    gpu.capture.pop()
                if mode & _GPU:
                    if exc_type is None:
                        gpu.engine.stop(s.timer_id, s.stream)
                    else:  # the body raised: a partial GPU interval, no sample either
                        gpu.engine.cancel(s.timer_id, s.stream)
                if exc_type is None and mode & _HOST:
                    s.samples.append(stop_ns - s.start_ns)
                    note = _gap_note
                    if note is not None and s.interval == 1:  # every entry timed
                        note(s.start_ns, stop_ns)
            except Exception as err:  # noqa: BLE001 - fail open
                self._owner.fail(err)
        if self._owner.hooks:
            self._owner.call_hooks_exit(s.name)
        return False


_get_ident = threading.get_ident


def _drop_leaked_entry(owner: SectionOwner, gpu: GpuTimer, s: Section) -> None:
    """Forget an entry of `s` left open across a report (never exited): untimed, logged once."""
    owner.warn_once(f"unbalanced-enter:{s.name}", "straggler: section %r was entered and not "
                    "exited before a report; the open entry is dropped and the section is "
                    "timed again from its next entry", s.name)
    mode, s.profiled, s.depth = s.profiled, 0, 0
    try:
        if mode & _PAUSED:
            gpu.capture.resume()
        if mode & _OPS:
            gpu.capture.pop()
        if mode & _GPU:  # close the engine's open timer (its one sample stays in the window)
            gpu.engine.stop(s.timer_id, s.stream)
    except Exception as err:  # noqa: BLE001 - fail open
        owner.fail(err)


class _HostContext(SectionContext):
    """Short path: host time of every outermost entry; enabled, no hooks, no GPU timer.

    Kept because it pays (benchmarks/section_paths.py, same run, 2-core CPU): the general path
    costs 1.6x this one per entry (1.43x a lean context manager here against 2.46x there)."""

    __slots__ = ()

    def __enter__(self) -> None:
        s = self._s
        if s.depth:  # nested, or an entry leaked across a report: the general path decides
            return SectionContext.__enter__(self)
        s.depth = 1
        s.thread = _get_ident()
        s.profiled = _HOST
        s.start_ns = perf_counter_ns()
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        stop_ns = perf_counter_ns()
        s = self._s
        depth = s.depth
        if depth == 1 and s.profiled == _HOST:
            s.depth = s.profiled = 0
            if exc_type is None:
                s.samples.append(stop_ns - s.start_ns)
                if _gap_note is not None:
                    _gap_note(s.start_ns, stop_ns)
            return False
        if depth > 1:
            s.depth = depth - 1
            return False
        return SectionContext.__exit__(self, exc_type, exc, tb)  # entered by another path


class _GpuContext(SectionContext):
    """Short path: host time of every outermost entry, GPU time of every `gpu_interval`-th (the
    op observer, when on, opened inside the GPU timer); enabled, no hooks.

    Why a short path at all (benchmarks/section_paths.py, 2-core CPU, simulated driver, every
    entry GPU-timed): the general path costs 1.2-1.5x this one per entry (+1.3-1.6 µs of Python
    on the loaded machine; the H100's event pair is 5.1-5.8 µs, so it would add a fifth or
    more). One GPU short path serves with and without the op observer (it was two classes):
    paired against the two, the merged one cost +0.5-0.8 % (noise) with the observer, the
    product's case, and +5-7 % of the Python (about 0.1 µs here) without it, the degraded case
    of a failed `_ops` (benchmarks/README.md, "Section short paths")."""

    __slots__ = ()

    def __enter__(self) -> None:
        s = self._s
        if s.depth:  # nested, or an entry leaked across a report: the general path decides
            return SectionContext.__enter__(self)
        s.depth = 1
        s.thread = _get_ident()
        left = s.gpu_left
        if left:  # not a GPU sample: what a host section costs
            s.gpu_left = left - 1
            s.profiled = _HOST
            s.start_ns = perf_counter_ns()
            return None
        s.gpu_left = s.gpu_interval - 1
        gpu = self._gpu
        try:
            stream = gpu.stream()
            cap = gpu.capture
            if stream >= 0:  # -1: a CUDA graph is being captured, no GPU timing
                gpu.engine.start(s.timer_id, stream)
                s.stream = stream
                s.profiled = _HOST_GPU  # so that a failing push() still stops the GPU timer
                if cap is not None:
                    cap.push()
                    s.profiled = _HOST_GPU_OPS
            else:
                s.gpu_left = 0  # the GPU sample is taken on the next entry instead
                s.profiled = _HOST
                if cap is not None:
                    cap.push()
                    s.profiled = _HOST | _OPS
        except Exception as exc:  # noqa: BLE001 - fail open, never into the training loop
            self._owner.fail(exc)  # the general exit stops what did start
            return None
        s.start_ns = perf_counter_ns()
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        stop_ns = perf_counter_ns()
        s = self._s
        depth = s.depth
        if depth == 1:
            mode = s.profiled
            if mode == _HOST:
                s.depth = s.profiled = 0
                if exc_type is None:
                    s.samples.append(stop_ns - s.start_ns)
                    if _gap_note is not None:
                        _gap_note(s.start_ns, stop_ns)
                return False
            if mode == _HOST_GPU_OPS:
                s.depth = s.profiled = 0
                gpu = self._gpu
                try:
                    gpu.capture.pop()
                    if exc_type is not None:  # the body raised: no GPU sample either
                        gpu.engine.cancel(s.timer_id, s.stream)
                        return False
                    gpu.engine.stop(s.timer_id, s.stream)
                except Exception as err:  # noqa: BLE001 - fail open
                    self._owner.fail(err)
                    return False
                s.samples.append(stop_ns - s.start_ns)
                if _gap_note is not None:
                    _gap_note(s.start_ns, stop_ns)
                return False
            if mode == _HOST_GPU:  # no op observer
                s.depth = s.profiled = 0
                try:
                    if exc_type is not None:  # the body raised: no GPU sample either
                        self._gpu.engine.cancel(s.timer_id, s.stream)
                        return False
                    self._gpu.engine.stop(s.timer_id, s.stream)
                except Exception as err:  # noqa: BLE001 - fail open
                    self._owner.fail(err)
                    return False
                s.samples.append(stop_ns - s.start_ns)
                if _gap_note is not None:
                    _gap_note(s.start_ns, stop_ns)
                return False
        elif depth > 1:
            s.depth = depth - 1
            return False
        return SectionContext.__exit__(self, exc_type, exc, tb)  # other modes, or another path


class NullContext:
    """The section handed out when detection is off (`STRAGGLER_DISABLE=1`): does nothing."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        return False


NULL_CONTEXT = NullContext()

