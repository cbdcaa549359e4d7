"""`GpuTiming`: the sections' GPU side (timing engine, stream getter, op observer, summaries).

The engine is created on the first profiled GPU entry, not when the detector is built, so that
the user has set the CUDA device by then; without a usable one sections are timed on the host
only (logged once). A section's GPU timer is a busy-mode engine timer (docs/engine.md, "Busy
time"): its samples are the GPU time of the section's ops, without host stalls, idle gaps or
collectives. The op observer (`OpCapture`) starts with the first GPU timer.

`Section`s read `engine`, `stream` and `capture` on the hot path: plain attributes, changed only
through `use_engine`/`use_capture` (tests hand fakes in the same way) and `close`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..analysis.statistics import Statistic
from .sections import NO_GPU, SectionKind

__all__ = ["GpuTiming", "cuda_status", "stream_getter"]

log = logging.getLogger("straggler")

_STAT_ORDER = (Statistic.MIN, Statistic.MAX, Statistic.MED, Statistic.AVG, Statistic.STD,
               Statistic.NUM)  # the engine's first six summary columns


def cuda_status() -> str:
    """The extension's word on the CUDA driver and device, for log lines and evidence."""
    try:
        from .. import _core

        return _core.cuda_status()[1]
    except Exception as exc:  # noqa: BLE001 - only for a log line
        return f"{type(exc).__name__}: {exc}"


def stream_getter() -> Callable[[], int]:
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


def _null_stream() -> int:
    return 0


class GpuTiming:
    """Engine, stream getter and op observer of one detector, created on first need.

    Args:
        capacity: samples kept per engine timer in a window.
        per_op_capture: time every op of profiled sections (per-op timers replace the sections'
            timers in GPU scores).
        fail: the detector's fail-open entry (the observer reports its errors there).
        warn_once: ``warn_once(key, msg, *args)``, the detector's log-once.
        on_change: called when the capture starts (sections' short paths depend on it).
    """

    def __init__(self, capacity: int, per_op_capture: bool, *,
                 fail: Callable[[BaseException], None],
                 warn_once: Callable[..., object], on_change: Callable[[], None]) -> None:
        self.capacity = capacity
        self.per_op_capture = per_op_capture
        self.engine: Any = None
        self.capture: Any = None
        self.stream: Callable[[], int] = _null_stream
        self.cuda_status: Callable[[], str] = cuda_status  # a seam for tests
        self._fail = fail
        self._warn_once = warn_once
        self._on_change = on_change
        self._engine_tried = False
        self._capture_tried = False
        self._section_timers: dict[str, None] = {}  # names of the sections' GPU timers
        # Busy-mode entries of the last report window that saw no GPU work (no GPU sample).
        self.idle_entries: dict[str, int] = {}

    # -- seams -----------------------------------------------------------------------------
    def use_engine(self, engine: Any, stream: Callable[[], int] | None = None) -> None:
        """Time with `engine` (and `stream`, a stream getter) instead of creating one."""
        self._engine_tried = True
        self.engine = engine
        if stream is not None:
            self.stream = stream

    def use_capture(self, capture: Any) -> None:
        """Use `capture` as the op observer instead of starting one with the first GPU timer."""
        self._capture_tried = True
        self.capture = capture
        self._on_change()

    def prepare_observer(self) -> None:
        """Have the C++ op observer at hand before training starts (`native_observer`).

        Only where it is used: with per-op capture, or when torch sees a CUDA device. A build
        cache miss is built now (once per node and torch version); without an observer one
        warning says why, what GPU time is then measured, and the fix. Never raises.
        """
        try:
            import torch

            if not (self.per_op_capture or torch.cuda.is_available()):
                return
            from .native_observer import status

            found = status(build=True)
        except Exception as exc:  # noqa: BLE001 - fail open: no native observer
            found = None
            detail, fix = f"{type(exc).__name__}: {exc}", "report this as a bug"
        if found is not None and found.native:
            log.info("straggler: native op observer %s (%s)", found.source, found.detail)
            return
        if found is not None:
            detail, fix = found.detail, found.fix
        consequence = ("every op is timed by the Python fallback, about 14x the cost per op"
                       if self.per_op_capture else
                       "GPU samples come only from sections the GPU was busy throughout")
        log.warning("straggler: the native op observer is not available: %s. So %s. Fix: %s",
                    detail, consequence, fix)

    # -- the engine and the sections' timers -------------------------------------------------
    def ensure_engine(self) -> Any:
        """The timing engine, created on first need (after the user set the device).

        None when the extension cannot make one (logged once): sections then time the host.
        """
        if not self._engine_tried:
            self._engine_tried = True
            try:
                import torch

                from .. import _core

                device = torch.cuda.current_device() if torch.cuda.is_available() else 0
                self.engine = _core.TimerEngine(backend="auto", capacity=self.capacity,
                                                device=device)
            except Exception as exc:  # noqa: BLE001 - no engine: host time only
                self._warn_once("no-engine", "straggler: the timing engine is unavailable "
                                "(%s: %s); sections are timed on the host only",
                                type(exc).__name__, exc)
                return None
            if self.engine.backend == "cuda":
                self.stream = stream_getter()
        return self.engine

    def timer_for(self, name: str, kind: SectionKind) -> int:
        """The engine timer id for section `name`'s GPU busy time, or NO_GPU (host time only).

        Called on a section's first profiled entry with profile_cuda; the caller stores the id.
        """
        if kind is not SectionKind.COMPUTE:
            return NO_GPU
        engine = self.ensure_engine()
        if engine is None:
            return NO_GPU
        if engine.backend != "cuda" and not self.per_op_capture:
            self._warn_once("host-only", "straggler: no usable CUDA device (%s); sections are "
                            "timed on the host only", self.cuda_status())
            return NO_GPU
        if self.capture is None and not self._capture_tried:
            self._capture_tried = True
            self._start_capture(engine)
        tid: int = engine.timer_id(name)
        engine.set_busy(tid)
        self._section_timers[name] = None
        return tid

    def forget(self, name: str) -> None:
        """Section `name` expired: its timer no longer feeds GPU scores until used again."""
        self._section_timers.pop(name, None)

    def _start_capture(self, engine: Any) -> None:
        """The op observer: per-op timers if asked, else busy time of sections only.

        Sections-only without the C++ observer (`straggler._ops` not built): no observer (the
        Python one costs too much per op); a section then gets a GPU sample only when the GPU
        never caught up with it (busy from its start to its stop), see docs/engine.md.
        """
        from .. import _core
        from .capture import OpCapture, native_observer_available

        if engine.backend != "cuda":
            log.info("straggler: per-op capture times ops with the host clock (%s)",
                     self.cuda_status())
        # The C++ observer calls a real engine through its address (tests use fakes).
        native = native_observer_available() and isinstance(engine, _core.TimerEngine)
        if not self.per_op_capture and not native:
            log.info("straggler: straggler._ops is not built for this torch: GPU samples come "
                     "only from sections the GPU was busy throughout")
            return
        stream = self._current_stream
        try:
            self.capture = OpCapture(engine, stream, self._fail, per_op=self.per_op_capture,
                                     native=native)
        except Exception as exc:  # noqa: BLE001 - the Python observer, or none
            self._warn_once("no-observer", "straggler: the op observer failed to start "
                            "(%s: %s)", type(exc).__name__, exc)
            if self.per_op_capture:
                self.capture = OpCapture(engine, stream, self._fail, per_op=True, native=False)
        self._on_change()

    def _current_stream(self) -> int:
        return self.stream()  # late-bound: the getter may be replaced after the capture starts

    # -- reports ---------------------------------------------------------------------------
    def no_timers_reason(self) -> str | None:
        """Why this rank has no GPU timers so far, for the causes' evidence (None: it has some)."""
        if self._section_timers or (self.capture is not None and self.capture.timer_names):
            return None
        if self._engine_tried and self.engine is None:
            return "the timing engine is unavailable on it (see its log)"
        if self._engine_tried and self.engine.backend != "cuda":
            return f"no usable CUDA device: {self.cuda_status()}"
        return "profile_cuda=False on every compute section it ran"

    def summaries(self) -> dict[str, dict[Statistic, float]]:
        """This window's GPU timer statistics (ms) of the timers that feed GPU scores.

        All are busy time (docs/engine.md): GPU time of the sections' ops, without host stalls,
        idle gaps or collectives. With per-op capture on: the per-op compute timers; otherwise
        the busy timers of compute sections and wrapped callables. A section whose entries
        launched no GPU work has no row (counted in `idle_entries`).
        """
        engine = self.engine
        if engine is None:
            return {}
        engine.flush()  # waits for our own events only; never a device synchronize
        names, values = engine.summaries()
        idle = getattr(engine, "idle_entries", None)  # test doubles may lack it
        self.idle_entries = {n: int(c) for n, c in (idle() if idle else {}).items()
                             if n in self._section_timers}
        per_op = self.capture is not None and self.capture.per_op
        keep = self.capture.timer_names if per_op else self._section_timers
        out: dict[str, dict[Statistic, float]] = {}
        for i, name in enumerate(names):
            if name in keep:
                row = values[i]
                out[name] = {stat: float(row[j]) for j, stat in enumerate(_STAT_ORDER)}
        return out

    def new_window(self) -> None:
        """Drop the engine's samples of the window that was just reported."""
        if self.engine is not None:
            self.engine.reset()

    def disable(self) -> None:
        """Stop the op observer from timing (fail open); the engine is left as it is."""
        if self.capture is not None:
            self.capture.enabled = False

    def native_objects(self) -> list[Any]:
        """What must never be destroyed in a forked child (forksafe.py)."""
        return [self.engine, self.capture]

    def close_capture(self) -> None:
        """Leave the op observer (if one started)."""
        if self.capture is not None:
            self.capture.close()

    def close_engine(self) -> None:
        """Close the engine (if one was created): its events and buffers are released."""
        if self.engine is not None:
            self.engine.close()
