"""Detection sections: the context manager a training loop enters every step.

Hot path. One `Section` per name holds the state; two `SectionContext` objects per section
(with and without GPU timing) are created once and reused for every entry, so entering a
section allocates nothing but the host-time sample. Only the outermost entry of a section is
timed (recursion and re-entry are counted once). Every `profiling_interval`-th outermost entry
is profiled, the first one always.

Order on a profiled entry: section hooks' `on_section_enter`, then GPU timer start, per-op
capture, host clock; on exit the reverse, and `on_section_exit` after our timers stopped.
Exceptions raised by the body propagate untouched (the host sample of that entry is dropped);
exceptions raised by the detector itself go to `owner.fail()`, never into the loop.

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
from time import perf_counter_ns
from typing import Any, Deque, Protocol

__all__ = ["SectionKind", "Section", "SectionContext", "NullContext", "SectionHook"]


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


# Section.timer_id values that are not engine ids.
UNRESOLVED = -1  # GPU timer not looked up yet
NO_GPU = -2      # no GPU timing for this section (host backend, or communication)

# Section.profiled bits for the entry in progress.
_HOST = 1
_GPU = 2
_OPS = 4
_PAUSED = 8


class Section:
    """State of one named detection section (shared by its two contexts)."""

    __slots__ = ("name", "kind", "interval", "count", "depth", "profiled", "start_ns",
                 "samples", "timer_id", "gpu_ctx", "host_ctx", "seen", "seen_count", "expired",
                 "location", "entered_report", "thread")

    def __init__(self, owner: Any, name: str, kind: SectionKind, interval: int,
                 capacity: int) -> None:
        self.name = name
        self.kind = kind
        self.interval = interval
        self.count = 0      # outermost entries so far
        self.depth = 0      # current nesting of this section
        self.profiled = 0   # _HOST|_GPU|_OPS|_PAUSED bits of the entry in progress
        self.start_ns = 0
        self.samples: Deque[float] = collections.deque(maxlen=capacity)  # host ms
        self.timer_id = UNRESOLVED
        self.gpu_ctx = SectionContext(owner, self, True)
        self.host_ctx = SectionContext(owner, self, False)
        # Name expiry (DetectorCore._expire_names): the report it was last used in, `count`
        # then, whether it was forgotten, and its `with` location for unnamed sections.
        self.seen = 0
        self.seen_count = 0
        self.expired = False
        self.location: Any = None
        # The outermost entry in progress: the owner's report count then, and its thread.
        self.entered_report = 0
        self.thread = 0


class SectionContext:
    """`with` target for one section; reusable and re-entrant (same thread)."""

    __slots__ = ("_owner", "_s", "_cuda")

    def __init__(self, owner: Any, section: Section, profile_cuda: bool) -> None:
        self._owner = owner
        self._s = section
        self._cuda = profile_cuda

    @property
    def name(self) -> str:
        """The section's name."""
        return self._s.name

    def __enter__(self) -> None:
        s = self._s
        owner = self._owner
        if s.depth and s.entered_report != owner._reports and s.thread == _get_ident():
            _drop_leaked_entry(owner, s)
        s.depth += 1
        if s.depth != 1:
            return None
        s.entered_report = owner._reports
        s.thread = _get_ident()
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
            if s.kind is SectionKind.COMMUNICATION:
                cap = owner.capture
                if cap is not None:
                    cap.pause()
                    s.profiled = _PAUSED
                return None
            mode = _HOST
            if self._cuda:
                tid = s.timer_id
                if tid == UNRESOLVED:
                    tid = owner.resolve_gpu_timer(s)
                if tid >= 0:
                    stream = owner.stream()
                    if stream >= 0:  # -1: a CUDA graph is being captured, no GPU timing
                        owner.engine.start(tid, stream)
                        mode |= _GPU
                cap = owner.capture
                if cap is not None:
                    s.profiled = mode  # so that a failing push() still stops the GPU timer
                    cap.push()
                    mode |= _OPS
            s.profiled = mode
            s.start_ns = perf_counter_ns()
        except Exception as exc:  # noqa: BLE001 - fail open, never into the training loop
            owner.fail(exc)
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
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
            owner = self._owner
            try:
                if mode & _PAUSED:
                    owner.capture.resume()
                if mode & _OPS:
                    owner.capture.pop()
                if mode & _GPU:
                    owner.engine.stop(s.timer_id, owner.stream())
                if exc_type is None and mode & _HOST:
                    s.samples.append((stop_ns - s.start_ns) * 1e-6)
            except Exception as err:  # noqa: BLE001 - fail open
                owner.fail(err)
        if self._owner.hooks:
            self._owner.call_hooks_exit(s.name)
        return False


_get_ident = threading.get_ident


def _drop_leaked_entry(owner: Any, s: Section) -> None:
    """Forget an entry of `s` left open across a report (never exited): untimed, logged once."""
    owner.warn_once(f"unbalanced-enter:{s.name}", "straggler: section %r was entered and not "
                    "exited before a report; the open entry is dropped and the section is "
                    "timed again from its next entry", s.name)
    mode, s.profiled, s.depth = s.profiled, 0, 0
    try:
        if mode & _PAUSED:
            owner.capture.resume()
        if mode & _OPS:
            owner.capture.pop()
        if mode & _GPU:  # close the engine's open timer (its one sample stays in the window)
            owner.engine.stop(s.timer_id, owner.stream())
    except Exception as err:  # noqa: BLE001 - fail open
        owner.fail(err)


class NullContext:
    """The section handed out when detection is off (`STRAGGLER_DISABLE=1`): does nothing."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        return False


NULL_CONTEXT = NullContext()

