"""Every torch.distributed collective this process runs, seen without user code.

The native observer (`straggler._ops`, csrc/ops/collectives.cpp) registers one kernel at the
``BackendSelect`` key of every ``c10d::`` dispatcher op while it is on, so collectives issued
through torch.distributed on any process group pass through it: ``dist.all_reduce`` and friends
(``async_op=True`` included), DDP's reducer (autograd hooks), functional collectives, barrier,
send/recv. Other ops never reach it. Off (nothing registered, nothing paid) until `start`, which
the detector calls in ``Detector.initialize`` and undoes in ``shutdown``.

Per process group (its c10d name, which every member agrees on; a point-to-point pair is
``"<group>:p2p:<a>-<b>"`` with the pair's group ranks) it keeps:

- progress (`progress`): the index of the last collective in the group's sequence, its op,
  whether this rank is inside one now (issued, not finished) and since when. For the hang
  watchdog and the zero-code attach: cheap to read at any time, from any thread.
- waits (`take_window`): per collective, arrival (the call) to completion (the Work's future is
  done: on gloo when its worker finished, whatever the caller does with ``wait()``), from no
  earlier than the group's previous completion; on CUDA tensors the same read from two CUDA
  events on the GPU (`gpu_status`; docs/culprits.md "GPU"). Summed, minimum and a log2
  histogram since the last `take_window`. The report turns them into culprits
  (`straggler.analysis.waits`).

Across groups (of 2 or more ranks) it notes this rank's own time: each gap from the moment
none of its collectives is in flight to its next arrival, the time it spent on its own work,
summed per training step (`mark_step`, which the detector calls once a step, or the loop's
first section for a job that never does: `SectionSteps`) and read per report window
(`take_own_time`; `straggler.analysis.own_time`). A host collective stops being in flight when
its caller returns from the Work's ``wait()`` (the observer hands the caller a Work of its own
that forwards every call and notes that), else when the backend's thread completes it.

The detector's own collectives run on a private gloo backend outside the dispatcher and are
never seen; `start(exclude=...)` can leave more groups out by name. Cost on CPU: 0.09 µs of
its own per collective, 0.5-0.7 µs per gloo collective with the dispatcher's hop and the
backend's thread (benchmarks/collectives.py).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from typing import Any

from . import sections

__all__ = ["GpuStatus", "GroupProgress", "GroupWaits", "OwnTime", "SectionSteps", "WAIT_BINS",
           "error", "gpu_status", "is_observing", "mark_step", "progress", "start",
           "step_marker", "stop", "take_own_time", "take_window"]

log = logging.getLogger("straggler")

WAIT_BINS = 32
"""Histogram bins: bin 0 holds waits under 1 µs, bin i in [2^(i-1), 2^i) µs, the last the rest."""


@dataclasses.dataclass(frozen=True)
class GroupProgress:
    """Where this rank is in one group's sequence of collectives.

    Attributes:
        group: the group's c10d name (``"0"`` is the default group), the same on every member;
            a point-to-point pair is ``"<group>:p2p:<a>-<b>"`` (``a < b`` its group ranks).
        size: members of the group (2 for a pair).
        rank: this process's rank in the group (in the pair: 0 or 1).
        index: the last collective's index in the group's sequence (1 for the first; 0: none).
        op: that collective's c10d op (``"allreduce_"``, ``"barrier"``, ``"send"``, ...).
        unfinished: collectives issued and not finished (async ones may overlap).
        inside_since_s: ``time.monotonic()`` when the oldest unfinished one was issued, or None.
        completed: collectives finished so far.
    """

    group: str
    size: int
    rank: int
    index: int
    op: str
    unfinished: int
    inside_since_s: float | None
    completed: int

    @property
    def inside(self) -> bool:
        """Whether this rank is inside a collective of the group now."""
        return self.unfinished > 0


@dataclasses.dataclass(frozen=True)
class GroupWaits:
    """This rank's waits in one group since the last `take_window`.

    ``count`` collectives finished; ``wait_sum_s`` and ``wait_min_s`` are arrival-to-completion
    times in seconds; ``histogram`` has `WAIT_BINS` counts (see `WAIT_BINS`); ``desc`` is the
    group's description (``new_group(group_desc=...)``; ``"default_pg"`` for the default group,
    ``"undefined"`` when none was given, ``""`` for a point-to-point pair).
    """

    group: str
    size: int
    rank: int
    count: int
    wait_sum_s: float
    wait_min_s: float
    histogram: tuple[int, ...]
    desc: str = ""


def _native() -> Any:
    """``straggler._ops``, or None when it is not built (a plain install without torch)."""
    try:
        from .. import _ops
    except ImportError:
        return None
    return _ops


def start(exclude: Iterable[str] = (), cpu_as_gpu_stream: int | None = None) -> bool:
    """Observe every collective from now on; groups named in ``exclude`` are left out.

    Collectives on CUDA tensors are timed on the GPU (two events each, `gpu_status`).
    ``cpu_as_gpu_stream`` is for tests with the simulated driver (tests/sim): collectives on
    CPU tensors are then timed as GPU ones on that stream of device 0.

    Returns False (and logs once) when the native observer is missing: collectives are then
    not observed. Starting again only replaces ``exclude`` and ``cpu_as_gpu_stream``.
    """
    ops = _native()
    if ops is None:
        log.warning("straggler: collectives are not observed (straggler._ops is not built); "
                    "Report.waits and Report.culprits stay empty")
        return False
    if cpu_as_gpu_stream is not None and (not isinstance(cpu_as_gpu_stream, int)
                                          or cpu_as_gpu_stream < 0):
        raise ValueError(f"`cpu_as_gpu_stream={cpu_as_gpu_stream!r}` must be a stream handle "
                         "(an int >= 0) or None")
    ops.collectives_enable([str(name) for name in exclude],
                           -1 if cpu_as_gpu_stream is None else cpu_as_gpu_stream)
    sections.set_gap_note(ops.collectives_section)
    return True


def stop() -> None:
    """Stop observing: the kernels are unregistered, collectives cost nothing again."""
    sections.set_gap_note(None)
    ops = _native()
    if ops is not None:
        ops.collectives_disable()


def is_observing() -> bool:
    """Whether collectives are observed now (started, not stopped, not failed)."""
    ops = _native()
    return ops is not None and ops.collectives_enabled() and not ops.collectives_error()


def error() -> str:
    """The observer's first internal failure ('' when none); after one it records nothing."""
    ops = _native()
    return "" if ops is None else str(ops.collectives_error())


@dataclasses.dataclass(frozen=True)
class GpuStatus:
    """The GPU path: ``recorded`` collectives got their start event, ``read`` waits were read
    from their events, ``error`` is the first driver error ('' when none; the GPU path is then
    off, progress goes on)."""

    recorded: int
    read: int
    error: str


def gpu_status() -> GpuStatus:
    """How the GPU path of the collective waits fares (docs/culprits.md, "GPU")."""
    ops = _native()
    if ops is None:
        return GpuStatus(0, 0, "straggler._ops is not built")
    recorded, read, err = ops.collectives_gpu()
    return GpuStatus(int(recorded), int(read), str(err))


def progress() -> dict[str, GroupProgress]:
    """``{group: GroupProgress}`` of every group this rank has run a collective on."""
    ops = _native()
    if ops is None:
        return {}
    # The native clock is steady_clock, which is CLOCK_MONOTONIC, as time.monotonic_ns().
    return {name: GroupProgress(name, size, rank, index, op, unfinished,
                                None if since < 0 else since / 1e9, completed)
            for name, size, rank, index, op, unfinished, since, completed
            in ops.collectives_progress()}


@dataclasses.dataclass(frozen=True)
class OwnTime:
    """This rank's own time per step since the last `take_own_time`: ``steps_s`` (s, oldest
    first; the last 16,384 when there were more), ``count`` (how many steps there were),
    ``gpu`` (a collective took the GPU path: the host's gaps are not the GPU's, so they are not
    used) and ``outside_s``: the same steps' own time outside the timed sections (each
    section's part inside the gaps taken off; the sections judge their own time)."""

    steps_s: Any
    count: int
    gpu: bool
    outside_s: Any = None


def mark_step() -> None:
    """A training step ended on this rank: the gaps between its collectives since the last
    step that had any are one step's own time. The detector calls it once a step
    (``generate_report_if_interval_elapsed``); a step without collectives adds its time to the
    next one's."""
    ops = _native()
    if ops is not None:
        ops.collectives_mark_step()


def step_marker() -> Any:
    """The native `mark_step` itself (one call a step on the training thread, without this
    module's lookup), or None when the observer is not built."""
    ops = _native()
    return None if ops is None else ops.collectives_mark_step


class SectionSteps:
    """Step marks for a job that never calls ``generate_report_if_interval_elapsed()``: each
    entry of the loop's first section, the first one entered a second time (a one-off section
    before the loop never repeats), marks a step (``mark``, `step_marker`). Entries of that
    section delimit steps; one with gradient accumulation enters it once per micro-batch, and a
    micro-batch without collectives adds its time to the next one's (`mark_step`), so a step
    holds the same collectives on every rank.

    A section hook (`straggler.timing.sections.SectionHook`) of ``registry`` while it looks for
    that section (every section on the general path meanwhile); once found, the mark moves onto
    the section itself (``Section.step_mark``: that section alone on the general path, 1.3-2.1
    µs more a step on this project's CPU, docs/culprits.md) and the hook goes. `stop` undoes it.

    Args:
        mark: the step mark.
        registry: the detector's `straggler.timing.registry.SectionRegistry`.
    """

    MAX_NAMES = 1024
    """Names remembered while looking for the first one entered twice."""

    def __init__(self, mark: Any, registry: Any) -> None:
        self._mark = mark
        self._registry = registry
        self._seen: set[str] = set()
        self.anchor: str | None = None
        """The section whose entries mark the steps (None: none entered twice yet)."""

    def start(self) -> None:
        """Look for the loop's first section from now on."""
        self._registry.add_hook(self)

    def stop(self) -> None:
        """No more marks from sections (the job marks its steps itself)."""
        self._registry.remove_hook(self)
        s = self._registry.sections.get(self.anchor) if self.anchor is not None else None
        if s is not None and s.step_mark is self._mark:
            s.step_mark = None
            self._registry.specialise(s)

    def on_section_enter(self, name: str) -> None:
        """The second entry of a name makes it the anchor: a step begins at its every entry."""
        if self.anchor is not None or name not in self._seen:
            if self.anchor is None and len(self._seen) < self.MAX_NAMES:
                self._seen.add(name)
            return
        self.anchor = name
        self._seen.clear()
        s = self._registry.sections.get(name)
        if s is not None:  # else not registered (the names' cap): no marks
            s.step_mark = self._mark
        self._registry.remove_hook(self)  # respecialises every section, the anchor general
        if s is not None:
            self._registry.specialise(s)
            self._mark()  # this entry's: the section's own call comes from its next entry

    def on_section_exit(self, name: str) -> None:
        """Nothing: a step is marked at its anchor's entry."""


def take_own_time() -> OwnTime:
    """This rank's own time per step since the last call (the gaps between its collectives,
    from none in flight to the next arrival, groups of 2 or more ranks, summed per
    `mark_step`); restarts it."""
    import numpy as np

    ops = _native()
    if ops is None:
        return OwnTime(np.empty(0), 0, False, np.empty(0))
    raw, count, gpu, outside = ops.collectives_take_own_time()
    return OwnTime(np.frombuffer(raw, dtype=np.int64) / 1e9, int(count), bool(gpu),
                   np.frombuffer(outside, dtype=np.int64) / 1e9)


def take_window() -> list[GroupWaits]:
    """The waits of every group with finished collectives since the last call; restarts it."""
    ops = _native()
    if ops is None:
        return []
    return [GroupWaits(name, size, rank, count, wait_ns / 1e9, min_ns / 1e9, tuple(hist), desc)
            for name, size, rank, count, wait_ns, min_ns, hist, desc
            in ops.collectives_take_window()]

