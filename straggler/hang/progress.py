"""What one rank publishes about its progress, and how its watchdog reads it from the process.

`ProgressRecord` is the published form (compact JSON, a few hundred bytes). `LocalProgress`
reads the in-process state the training thread leaves behind anyway: the step count of the
report tracker, the sections' open entries (``Section.depth``/``start_ns``), and per process
group the last collective: from the collective observer (`straggler.timing.collectives`,
#18: index in the group's sequence, op, whether this rank is inside it now) when it runs, else
torch's own count (``ProcessGroup._get_sequence_number_for_group()``: collectives issued on
the group so far). Every rank uses the same source, so the numbers compare across ranks.
Nothing is added to the hot path: the watchdog thread reads these once per tick.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from .stacks import CollectiveWait, collective_wait, thread_frame, user_location

__all__ = ["ProgressRecord", "LocalProgress", "GroupState", "GroupSeqs", "torch_group_seqs",
           "observed_groups"]


@dataclass(frozen=True)
class GroupState:
    """One group's last collective on this rank: its index (sequence number), its op ("" when
    unknown) and since when this rank has been inside it (monotonic s; None: not inside)."""

    seq: int
    op: str = ""
    inside_since_s: float | None = None


GroupSeqs = Callable[[], dict[str, GroupState]]
MAX_GROUPS = 64  # groups per record: Megatron-style jobs have about ten per rank


@dataclass
class ProgressRecord:
    """One rank's published progress (JSON field names kept short: it is sent every second).

    ``t``: wall time of the record; ``step``: steps counted; ``sec``/``sec_s``: the innermost
    open section and for how long it has been open; ``open``: all open sections; ``g``: group
    name -> sequence number of its last collective; ``op``: group name -> that collective's op
    (when the collective observer runs); ``stall_s``: seconds since this rank's progress last
    changed;
    ``wait``: the collective its main thread is in (``op``, ``group``, ``seq``), when stalled;
    ``loc``: where its main thread is, when stalled: its own innermost frame outside torch,
    straggler and the standard library, then the innermost one (`stacks.user_location`).
    """

    r: int
    node: str = ""
    gpu: str = ""
    pid: int = 0
    t: float = 0.0
    step: int = 0
    sec: str = ""
    sec_s: float = 0.0
    open: list[str] = field(default_factory=list)
    g: dict[str, int] = field(default_factory=dict)
    op: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0
    wait: dict[str, Any] | None = None
    loc: str = ""

    def to_json(self) -> str:
        """The published form."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: bytes | str) -> ProgressRecord:
        """Parse a published record (unknown fields are ignored, for mixed versions)."""
        data = json.loads(raw)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    @property
    def waiting(self) -> CollectiveWait | None:
        """The collective this rank waits in, or None."""
        w = self.wait
        if not w:
            return None
        return CollectiveWait(str(w.get("op", "?")), str(w.get("group", "?")),
                              int(w.get("seq", -1)))


def torch_group_seqs() -> dict[str, GroupState]:
    """Every process group this rank belongs to, by name, with torch's sequence number."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return {}
    out: dict[str, GroupState] = {}
    for pg in list(dist.distributed_c10d._world.pg_map)[:MAX_GROUPS]:
        try:
            out[str(pg.group_name)] = GroupState(int(pg._get_sequence_number_for_group()))  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - a backend without sequence numbers: left out
            continue
    return out


def observed_groups() -> dict[str, GroupState] | None:
    """The collective observer's view of every group (None when it does not run)."""
    from ..timing import collectives

    if not collectives.is_observing():
        return None
    groups = sorted(collectives.progress().values(), key=lambda p: -p.index)[:MAX_GROUPS]
    out = {p.group: GroupState(p.index, p.op, p.inside_since_s if p.inside else None)
           for p in groups}
    # The groups of this rank it has run no collective on yet: at index 0 (none), so that a
    # member that never reached a group's first collective shows as behind there.
    for name in _member_groups():
        if len(out) >= MAX_GROUPS:
            break
        out.setdefault(name, GroupState(0))
    return out


def _member_groups() -> list[str]:
    """The names of the process groups this rank belongs to."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return []
    out = []
    for pg in list(dist.distributed_c10d._world.pg_map):
        try:
            out.append(str(pg.group_name))
        except Exception:  # noqa: BLE001 - a group without a name: left out
            continue
    return out


def job_groups() -> dict[str, GroupState]:
    """The collective observer's groups when it runs, else torch's sequence numbers."""
    observed = observed_groups()
    return observed if observed is not None else torch_group_seqs()


class LocalProgress:
    """Reads this rank's progress for its watchdog (never from the training thread).

    Args:
        rank, node, gpu: who this is (global rank, host name, physical GPU or "").
        sections: the live `Section` objects (a callable returning them).
        step: the steps counted so far (a callable).
        group_seqs: group name -> `GroupState` (default: `job_groups`: the collective
            observer's, else torch's sequence numbers).
        thread: the training thread's ident (default: the main thread).
        clock: monotonic seconds (the sections' ``start_ns`` clock, ``perf_counter``).
    """

    def __init__(self, rank: int, node: str, gpu: str, sections: Callable[[], Iterable[Any]],
                 step: Callable[[], int], group_seqs: GroupSeqs | None = None,
                 thread: int | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        import os
        import threading

        self.rank, self.node, self.gpu, self.pid = rank, node, gpu, os.getpid()
        self._sections = sections
        self._step = step
        self._group_seqs = group_seqs if group_seqs is not None else job_groups
        self.thread = threading.main_thread().ident if thread is None else thread
        self._clock = clock
        self._opened: dict[str, tuple[int, float]] = {}  # name -> (start_ns, opened at)
        self._signature: Any = None
        self.last_change = clock()

    def snapshot(self, with_location: bool = False) -> ProgressRecord:
        """The record now; `with_location` adds where the training thread is (a stack read)."""
        now = self._clock()
        step = int(self._step())
        groups = self._group_seqs()
        seqs = {name: g.seq for name, g in groups.items()}
        open_now: dict[str, float] = {}
        for s in list(self._sections()):
            if s.depth <= 0:
                continue
            start_ns = int(s.start_ns)
            seen = self._opened.get(s.name)
            if seen is None or seen[0] != start_ns:
                # A new entry since the last tick: its start is start_ns when that is recent.
                started = start_ns / 1e9 if 0 < now - start_ns / 1e9 < 1e6 else now
                seen = (start_ns, min(started, now))
            self._opened[s.name] = seen
            open_now[s.name] = seen[1]
        for name in [n for n in self._opened if n not in open_now]:
            del self._opened[name]
        signature = (step, tuple(sorted(seqs.items())),
                     tuple(sorted((n, self._opened[n][0]) for n in open_now)))
        if signature != self._signature:
            self._signature = signature
            self.last_change = now
        innermost = max(open_now.items(), key=lambda kv: kv[1], default=None)
        record = ProgressRecord(
            r=self.rank, node=self.node, gpu=self.gpu, pid=self.pid, t=time.time(), step=step,
            sec=innermost[0] if innermost else "",
            sec_s=round(now - innermost[1], 3) if innermost else 0.0,
            open=sorted(open_now, key=open_now.__getitem__), g=seqs,
            op={name: g.op for name, g in groups.items() if g.op},
            stall_s=round(now - self.last_change, 3))
        if with_location:
            frame = thread_frame(self.thread) if self.thread is not None else None
            w = collective_wait(frame) if frame is not None else None
            if frame is not None:
                record.loc = user_location(frame)
            if w is not None:
                # The group's number from the same source as ``g``, so ranks compare.
                seq = seqs.get(w.group, w.seq) if w.group in groups else w.seq
                record.wait = {"op": w.op, "group": w.group, "seq": seq}
            else:
                record.wait = _oldest_unfinished(groups)
        return record

    def stall_s(self) -> float:
        """Seconds since the progress last changed (as of the latest snapshot)."""
        return self._clock() - self.last_change


def _oldest_unfinished(groups: dict[str, GroupState]) -> dict[str, Any] | None:
    """The collective this rank has been inside longest (issued, not finished: an NCCL
    collective the training thread left running), as a record's ``wait``; None if none."""
    inside = [(g.inside_since_s, name, g) for name, g in groups.items()
              if g.inside_since_s is not None]
    if not inside:
        return None
    _, name, g = min(inside)
    return {"op": g.op or "?", "group": name, "seq": g.seq}
