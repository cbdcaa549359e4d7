"""From everyone's progress records to a finding: who the job waits for, or a whole-job stall.

Pure: records in, a `HangFinding` out (no store, no process group), so it is tested with
hand-made records. The rules (docs/hang.md, "How a culprit is named"):

1. A rank whose record is older than ``gone_after_s`` (or whose process is known to have
   exited) is *gone*; a rank that never published is gone too.
2. Ranks whose training thread is inside a torch.distributed call publish it
   (``op``/``group``/``seq``). The collective most ranks wait in is *the* collective; the
   members of its group whose sequence number there is lower have *not arrived*: culprits.
3. Ranks wait in *different* collectives (op, group or sequence number) and nobody is behind
   or gone: a *collective mismatch* (a desync: the ranks' code called different collectives).
   The ranks outside the collective most of them wait in are the culprits (all the waiting
   ranks on a tie), each with the collective it is in; every collective is listed with its
   ranks.
4. Ranks wait but nobody is behind (a backend without sequence numbers): the ranks that are
   in no collective are the culprits.
5. Nobody waits and nobody is gone: every rank stalls outside collectives, a *whole-job stall*
   (a long evaluation, checkpoint, data stall everywhere): reported, nobody blamed.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from .progress import ProgressRecord
from .stacks import CollectiveWait

__all__ = ["Culprit", "HangFinding", "analyse", "HANG", "STALL", "NOT_ARRIVED", "GONE",
           "EXITED", "MISMATCHED", "MAX_CULPRITS_SHOWN"]

HANG = "hang"  # culprits named
STALL = "stall"  # the whole job stalls together: nobody blamed
NOT_ARRIVED = "not arrived"  # alive, has not reached the collective the others wait in
GONE = "gone"  # no progress record for gone_after_s: dead, or its interpreter is frozen
EXITED = "exited"  # its process no longer exists (checked on the reporter's own host)
MISMATCHED = "mismatched"  # waits in another collective than the others (a desync)
MAX_CULPRITS_SHOWN = 16  # in the log block; the record lists them all


@dataclasses.dataclass(frozen=True)
class Culprit:
    """A rank the others wait for, with everything known about it."""

    rank: int
    state: str  # NOT_ARRIVED, GONE, EXITED or MISMATCHED
    node: str = ""
    gpu: str = ""
    step: int = -1
    section: str = ""
    section_s: float = 0.0
    seq: int = -1  # its sequence number in the waited-in group (-1: unknown)
    waiting_in: CollectiveWait | None = None  # where it waits itself, if anywhere
    location: str = ""
    last_seen_s: float = float("nan")  # age of its latest record
    stack: str = ""
    blocked_by: tuple[int, ...] = ()
    """The members of the group of `waiting_in` that have not reached that collective (gone
    ones included): the ranks this culprit waits for, where it waits itself."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``hang`` record's ``culprits`` items)."""
        d = dataclasses.asdict(self)
        d["waiting_in"] = dataclasses.asdict(self.waiting_in) if self.waiting_in else None
        d["blocked_by"] = list(self.blocked_by)
        seen = d["last_seen_s"]
        d["last_seen_s"] = None if math.isnan(seen) else round(seen, 3)  # never published
        return d


@dataclasses.dataclass(frozen=True)
class HangFinding:
    """What the reporter found. ``kind`` is `HANG` (``culprits`` named) or `STALL`."""

    kind: str
    world_size: int
    stalled_s: float  # how long the job has made no progress (the longest stall seen)
    timeout_s: float
    wait: CollectiveWait | None = None  # the collective the others wait in
    waiting: tuple[int, ...] = ()  # the ranks waiting in it
    culprits: tuple[Culprit, ...] = ()
    sections: tuple[tuple[str, int], ...] = ()  # (section, ranks in it), most ranks first
    reporter: int = 0
    waiting_later: tuple[int, ...] = ()
    """The ranks waiting in a later collective of the same group: past the waited-in one
    (its other members let them through: a broadcast's root, a rank of a finished pair), so
    stopped by the culprits too."""
    mismatch: tuple[tuple[CollectiveWait, tuple[int, ...]], ...] = ()
    """A collective mismatch (the ranks wait in different collectives, nobody is behind): every
    collective waited in, with its ranks, most ranks first; empty otherwise."""
    waiting_at: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Where in their code the waiting ranks that are not culprits wait (`Culprit.location`'s
    form), with their ranks, most ranks first."""

    @property
    def culprit_ranks(self) -> list[int]:
        """The ranks blamed (empty for a whole-job stall)."""
        return [c.rank for c in self.culprits]

    def with_stacks(self, stacks: Mapping[int, str]) -> HangFinding:
        """This finding with the culprits' stacks filled in from `stacks`."""
        culprits = tuple(dataclasses.replace(c, stack=stacks.get(c.rank, c.stack))
                         for c in self.culprits)
        return dataclasses.replace(self, culprits=culprits)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> HangFinding:
        """The finding a ``hang`` record holds (`to_dict`'s inverse); KeyError, TypeError or
        ValueError on a malformed one."""
        def wait(w: Any) -> CollectiveWait | None:
            return None if w is None else CollectiveWait(str(w["op"]), str(w["group"]),
                                                         int(w["seq"]))

        def seen(value: Any) -> float:
            return math.nan if value is None else float(value)

        culprits = tuple(
            Culprit(int(c["rank"]), str(c["state"]), str(c.get("node", "")),
                    str(c.get("gpu", "")), int(c.get("step", -1)), str(c.get("section", "")),
                    float(c.get("section_s", 0.0)), int(c.get("seq", -1)),
                    wait(c.get("waiting_in")), str(c.get("location", "")),
                    seen(c.get("last_seen_s")), str(c.get("stack", "")),
                    tuple(int(r) for r in c.get("blocked_by") or ()))
            for c in d.get("culprits", []))
        return cls(str(d["kind"]), int(d["world_size"]), float(d["stalled_s"]),
                   float(d["timeout_s"]), wait(d.get("wait")),
                   tuple(int(r) for r in d.get("waiting", [])), culprits,
                   tuple((str(x["section"]), int(x["ranks"])) for x in d.get("sections", [])),
                   int(d.get("reporter", 0)),
                   tuple(int(r) for r in d.get("waiting_later", [])),
                   tuple((CollectiveWait(str(m["op"]), str(m["group"]), int(m["seq"])),
                          tuple(int(r) for r in m["ranks"]))
                         for m in d.get("mismatch", [])),
                   tuple((str(w["location"]), tuple(int(r) for r in w["ranks"]))
                         for w in d.get("waiting_at", [])))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields of the ``hang`` record (docs/reportlog.md)."""
        return {
            "kind": self.kind, "world_size": self.world_size,
            "stalled_s": round(self.stalled_s, 3), "timeout_s": round(self.timeout_s, 3),
            "wait": dataclasses.asdict(self.wait) if self.wait else None,
            "waiting": list(self.waiting),
            "culprits": [c.to_dict() for c in self.culprits],
            "sections": [{"section": s, "ranks": n} for s, n in self.sections],
            "reporter": self.reporter,
            "waiting_later": list(self.waiting_later),
            "mismatch": [{**dataclasses.asdict(w), "ranks": list(ranks)}
                         for w, ranks in self.mismatch],
            "waiting_at": [{"location": loc, "ranks": list(ranks)}
                           for loc, ranks in self.waiting_at],
        }

    def format(self) -> str:
        """The log block: one headline, then one paragraph per culprit."""
        if self.kind == STALL:
            where = ", ".join(f"{s!r} ({n} rank{'s' if n != 1 else ''})" if s else
                              f"no section ({n} rank{'s' if n != 1 else ''})"
                              for s, n in self.sections[:8])
            inside = (f"all inside {_wait_text(self.wait)}{self._where(self.waiting)}, none "
                      "behind" if self.wait is not None and self.waiting
                      else "none inside a collective")
            return (f"straggler: whole-job stall: all {self.world_size} ranks have made no "
                    f"progress for {self.stalled_s:.1f} s (hang timeout {self.timeout_s:.0f} s)"
                    f", {inside}; in {where}. No rank is blamed.")
        names = ", ".join(str(r) for r in self.culprit_ranks[:MAX_CULPRITS_SHOWN])
        more = len(self.culprits) - MAX_CULPRITS_SHOWN
        if more > 0:
            names += f" and {more} more"
        if self.mismatch:
            head = (f"straggler: HANG: collective mismatch (desync): "
                    f"{sum(len(r) for _, r in self.mismatch)} of {self.world_size} ranks have "
                    f"waited {self.stalled_s:.1f} s in {len(self.mismatch)} different "
                    f"collectives, none behind the others: their code called different "
                    f"collectives (hang timeout {self.timeout_s:.0f} s)")
        elif self.wait is not None:
            head = (f"straggler: HANG: {len(self.waiting)} of {self.world_size} ranks have "
                    f"waited {self.stalled_s:.1f} s in {_wait_text(self.wait)} for rank(s) "
                    f"{names} (hang timeout {self.timeout_s:.0f} s)")
        else:
            head = (f"straggler: HANG: the job has made no progress for {self.stalled_s:.1f} s "
                    f"(hang timeout {self.timeout_s:.0f} s); rank(s) {names} gone")
        lines = [head]
        lines += [f"  in {_wait_text(w)}: rank(s) {_ranks_text(ranks)}{self._where(ranks)}"
                  for w, ranks in self.mismatch[:MAX_CULPRITS_SHOWN]]
        for c in self.culprits[:MAX_CULPRITS_SHOWN]:
            lines += _culprit_lines(c, self.wait, self._blocker_text(c))
        if self.waiting and not self.mismatch:
            later = (f"; further on, in later collectives of that group: rank(s) "
                     f"{_ranks_text(self.waiting_later)}" if self.waiting_later else "")
            lines.append(f"  waiting: rank(s) {_ranks_text(self.waiting)}"
                         f"{self._where(self.waiting)}{later}")
        return "\n".join(lines)

    def _where(self, ranks: tuple[int, ...]) -> str:
        """Where `ranks` wait in their code: ``, at LOC`` when they all wait at one place, else
        the places with their ranks (the 3 most common); "" when not known."""
        wanted = set(ranks)
        places = [(loc, tuple(r for r in rs if r in wanted)) for loc, rs in self.waiting_at]
        places = [(loc, rs) for loc, rs in places if rs]
        if not places:
            return ""
        if len(places) == 1 and len(places[0][1]) == len(wanted):
            return f", at {places[0][0]}"
        shown = "; ".join(f"rank(s) {_ranks_text(rs)} at {loc}" for loc, rs in places[:3])
        return f" ({shown}{'; ...' if len(places) > 3 else ''})"

    def _blocker_text(self, c: Culprit) -> str:
        """Who `c` waits for where it waits itself, and where they are (for its second line)."""
        if c.waiting_in is None or c.state == MISMATCHED or self.wait is None:
            return ""
        if c.waiting_in == self.wait:
            return ""
        text = f"it waits instead in {_wait_text(c.waiting_in)}"
        if not c.blocked_by:
            return text
        gone = {x.rank for x in self.culprits if x.state in (GONE, EXITED)}
        text += f", for rank(s) {_ranks_text(c.blocked_by)}"
        if set(c.blocked_by) <= set(self.waiting):
            return (f"{text}, which wait in {_op_text(self.wait.op)} #{self.wait.seq} for "
                    f"rank {c.rank}: a deadlock, each waits for the other (their code calls "
                    f"these collectives in a different order, or skips one)")
        if set(c.blocked_by) <= gone:
            return f"{text} (gone)"
        return f"{text}, which have not reached it either"


# The collective observer names ops as c10d's ProcessGroup does; people know the Python API's.
_API_NAMES = {"allreduce_": "all_reduce", "allreduce_coalesced_": "all_reduce_coalesced",
              "allgather_": "all_gather", "_allgather_base_": "all_gather_into_tensor",
              "allgather_into_tensor_coalesced_": "all_gather_into_tensor_coalesced",
              "reduce_scatter_": "reduce_scatter",
              "_reduce_scatter_base_": "reduce_scatter_tensor",
              "reduce_scatter_tensor_coalesced_": "reduce_scatter_tensor_coalesced",
              "alltoall_": "all_to_all", "alltoall_base_": "all_to_all_single",
              "broadcast_": "broadcast", "reduce_": "reduce", "gather_": "gather",
              "scatter_": "scatter", "recv_": "recv", "recv_any_source_": "recv"}


def _op_text(op: str) -> str:
    """`op` as torch.distributed's Python API names it (``allreduce_`` -> ``all_reduce``)."""
    return _API_NAMES.get(op, op)


def _wait_text(w: CollectiveWait) -> str:
    group = "WORLD (group 0)" if w.group == "0" else f"group {w.group}"
    seq = f", collective #{w.seq}" if w.seq >= 0 else ""
    return f"{_op_text(w.op)} on {group}{seq}"


def _ranks_text(ranks: tuple[int, ...] | list[int]) -> str:
    shown = ",".join(str(r) for r in ranks[:32])
    return shown + (f",... ({len(ranks)} ranks)" if len(ranks) > 32 else "")


def _culprit_lines(c: Culprit, wait: CollectiveWait | None, blocker: str = "") -> list[str]:
    where = f"node {c.node or '?'}" + (f", GPU {c.gpu}" if c.gpu else "")
    if c.state == NOT_ARRIVED and wait is not None:
        at = f" (it has issued #{c.seq} there)" if c.seq >= 0 else ""
        what = f"has not reached {_op_text(wait.op)} #{wait.seq}{at}"
    elif c.state == MISMATCHED and c.waiting_in is not None:
        what = f"is in {_wait_text(c.waiting_in)}"
    elif c.state == EXITED:
        what = f"is gone: its process exited (last heard of {c.last_seen_s:.1f} s ago)"
    elif c.state == GONE:
        what = ("is gone: never published progress" if math.isnan(c.last_seen_s) else
                f"is gone: no progress record for {c.last_seen_s:.1f} s (the process died, "
                "or a call holding the GIL froze it)")
    else:
        what = "is not in any collective"
    lines = [f"  rank {c.rank} ({where}) {what}"]
    if blocker:
        lines.append(f"    {blocker}")
    doing = (f"in section {c.section!r} for {c.section_s:.1f} s" if c.section
             else "in no section")
    inside = (f", inside {_wait_text(c.waiting_in)}" if c.waiting_in and not blocker
              and c.state != MISMATCHED else "")
    lines.append(f"    doing: {doing}, step {c.step}{inside}"
                 + (f", at {c.location}" if c.location else ""))
    if c.stack:
        lines.append("    Python stack of its training thread (innermost last):")
        lines += ["      " + line for line in c.stack.rstrip("\n").splitlines()]
    elif c.state in (NOT_ARRIVED, MISMATCHED):
        lines.append("    Python stack: not published (its watchdog did not answer in time)")
    return lines


def _culprit(rank: int, rec: ProgressRecord | None, state: str, now: float,
             group: str | None, records: Mapping[int, ProgressRecord] | None = None
             ) -> Culprit:
    if rec is None:
        return Culprit(rank, state)
    w = rec.waiting
    blocked_by: tuple[int, ...] = ()
    if w is not None and w.seq >= 0 and records is not None:
        # the members of its group (the ranks that publish it) that have not reached it
        blocked_by = tuple(sorted(r for r, other in records.items() if r != rank
                                  and w.group in other.g and other.g[w.group] < w.seq))
    return Culprit(rank, state, rec.node, rec.gpu, rec.step, rec.sec, rec.sec_s,
                   rec.g.get(group, -1) if group is not None else -1, w, rec.loc,
                   max(0.0, now - rec.t), blocked_by=blocked_by)


def analyse(records: Mapping[int, ProgressRecord], world_size: int, now: float, *,
            gone_after_s: float, timeout_s: float, reporter: int = 0,
            exited: Callable[[ProgressRecord], bool] = lambda rec: False) -> HangFinding:
    """The finding for `records` (global rank -> latest record) read at wall time `now`."""
    gone: dict[int, str] = {}
    for r in range(world_size):
        rec = records.get(r)
        if rec is None or now - rec.t > gone_after_s:
            gone[r] = EXITED if rec is not None and exited(rec) else GONE
        elif exited(rec):
            gone[r] = EXITED
    alive = {r: rec for r, rec in records.items() if r not in gone and 0 <= r < world_size}
    stalled_s = max((rec.stall_s + max(0.0, now - rec.t) for rec in alive.values()),
                    default=0.0)
    waiters = {r: w for r, rec in alive.items() if (w := rec.waiting) is not None}
    waits = Counter((w.group, w.seq) for w in waiters.values())
    wait: CollectiveWait | None = None
    waiting: tuple[int, ...] = ()
    later: tuple[int, ...] = ()
    behind: list[int] = []
    mismatch: tuple[tuple[CollectiveWait, tuple[int, ...]], ...] = ()
    if waits:
        (group, seq), _ = min(waits.items(), key=lambda kv: (-kv[1], kv[0]))
        waiting = tuple(sorted(r for r, w in waiters.items() if (w.group, w.seq) == (group, seq)))
        # The op as most of them name it (a stack says "all_reduce", the observer "allreduce_").
        op = Counter(waiters[r].op for r in waiting).most_common(1)[0][0]
        wait = CollectiveWait(op, group, seq)
        if seq >= 0:
            behind = sorted(r for r, rec in alive.items()
                            if group in rec.g and rec.g[group] < seq)
            later = tuple(sorted(r for r, w in waiters.items() if w.group == group
                                 and w.seq > seq))
        if not behind and not gone:
            mismatch = _mismatch(waiters)
            # no sequence numbers, or a mismatch: the ranks in no collective
            behind = sorted(r for r, rec in alive.items() if rec.waiting is None)
        group_of_wait: str | None = group
    else:
        group_of_wait = None
    culprits = [_culprit(r, records.get(r), gone[r], now, group_of_wait) for r in sorted(gone)]
    culprits += [_culprit(r, alive[r], NOT_ARRIVED, now, group_of_wait, records)
                 for r in behind]
    if mismatch:
        top = mismatch[0][1]
        if len(mismatch) > 1 and len(mismatch[1][1]) == len(top):
            top = ()  # a tie: no collective is *the* one, every waiting rank is named
        wait = _same_collective(waiters[top[0]]) if top else None
        waiting, later = top, ()
        culprits += [_culprit(r, alive[r], MISMATCHED, now, group_of_wait)
                     for r in sorted(waiters) if r not in top]
    culprits.sort(key=lambda c: c.rank)
    named = {c.rank for c in culprits}
    places: dict[str, list[int]] = {}
    for r in sorted(waiters):
        if r not in named and alive[r].loc:
            places.setdefault(alive[r].loc, []).append(r)
    waiting_at = tuple(sorted(((loc, tuple(rs)) for loc, rs in places.items()),
                              key=lambda kv: (-len(kv[1]), kv[1][0])))
    if not culprits:
        sections = Counter(rec.sec for rec in alive.values())
        return HangFinding(STALL, world_size, stalled_s, timeout_s, wait, waiting,
                           sections=tuple(sorted(sections.items(), key=lambda kv: -kv[1])),
                           reporter=reporter, waiting_at=waiting_at)
    return HangFinding(HANG, world_size, stalled_s, timeout_s, wait, waiting, tuple(culprits),
                       reporter=reporter, waiting_later=later, mismatch=mismatch,
                       waiting_at=waiting_at)


def _same_collective(w: CollectiveWait) -> CollectiveWait:
    """`w` with its op as the Python API names it: a stack and the observer may differ."""
    return CollectiveWait(_op_text(w.op), w.group, w.seq)


def _mismatch(waiters: Mapping[int, CollectiveWait]
              ) -> tuple[tuple[CollectiveWait, tuple[int, ...]], ...]:
    """The collectives `waiters` wait in, with their ranks, most ranks first, when there are
    two or more (a mismatch); else empty."""
    by_collective: dict[CollectiveWait, list[int]] = {}
    for r in sorted(waiters):
        by_collective.setdefault(_same_collective(waiters[r]), []).append(r)
    if len(by_collective) < 2:
        return ()
    ordered = sorted(by_collective.items(),
                     key=lambda kv: (-len(kv[1]), kv[1][0]))
    return tuple((w, tuple(ranks)) for w, ranks in ordered)
