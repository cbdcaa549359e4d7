"""A report's collective that waits in vain: a peer already past the report, seen in its record.

A rank that does not make a report's call (its loop skipped it, or called it on another
iteration) leaves its peers in the report's first collective; it goes on to its next training
collective, where it waits for them: a deadlock that only ``comm_timeout_s`` (120 s by default)
used to end. The peers cannot learn from the report's collective that the rank will not come,
but the hang watchdog already publishes every rank's progress once a second (progress.py): a
rank whose record shows a collective, on a group both share, beyond this rank's own is past the
point where this rank reports. It will not join before the peers leave the report.

`PeersPast` is the detector communicator's `stall_check` (straggler/dist/comm.py): called about
once a second while one of its collectives has waited longer than a short grace, it says which
rank is past. Only one waiting rank reads the records per collective (the first to ask, by a
counter in the store); the others read its verdict, one small key. Each waiting rank marks
itself, so that a rank inside the report with us is never taken for one that went on.

The verdict cannot end the peers' collective by itself (gloo cannot cancel a pending one, and
releasing its backend waits for it), so the rank that is past is asked to leave: the reader
writes `leave_key`, which that rank's watchdog polls while its training thread makes no
progress (`HangWatchdog.on_leave`), and it closes its detector communicators: the peers' pending
collective fails at once, they turn off with the verdict as the reason, and the rank that left
turns off at its next detector call. Each rank logs once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .progress import GroupState, ProgressRecord, job_groups
from .store import ProgressStore

__all__ = ["PeersPast", "leave_key"]


class PeersPast:
    """Finds the peers past a collective this rank waits in (see the module docstring).

    Args:
        store: the hang watchdog's `ProgressStore` (its records under ``p/<rank>``).
        rank: this rank's global rank; ``ranks``: the global ranks of the communicator's group.
        groups: this rank's process groups now (`job_groups`: the source the records use).
    """

    def __init__(self, store: ProgressStore, rank: int, ranks: Sequence[int],
                 groups: Callable[[], dict[str, GroupState]] = job_groups) -> None:
        self.store = store
        self.rank = rank
        self.ranks = list(ranks)
        self._groups = groups
        self._serial: int | None = None
        self._reader = False

    def __call__(self, serial: int) -> str | None:
        """Why the collective ``serial`` (the communicator's count, the same on every rank)
        waits in vain, or None; never raises (a store error: None, hang detection logs it).
        A negative ``serial``: that collective failed; only the verdict, if another rank wrote
        one (one read, no records)."""
        if serial < 0:
            verdict = self.store.get(f"absent/{-serial}/verdict")
            return verdict.decode(errors="replace") if verdict else None
        key = f"absent/{serial}"
        if serial != self._serial:  # first call for this collective
            self._serial = serial
            self.store.put(f"{key}/at/{self.rank}", "1")
            self._reader = self.store.add(f"{key}/readers", 1) == 1
        if not self._reader:
            verdict = self.store.get(f"{key}/verdict")
            return verdict.decode(errors="replace") if verdict else None
        why = self._read(key)
        if why is not None:
            self.store.put(f"{key}/verdict", why)
        return why

    def _read(self, key: str) -> str | None:
        """The reader: the first peer whose record is past this rank's own collectives and
        that is not waiting in this collective."""
        own = self._groups()
        others = [r for r in self.ranks if r != self.rank]
        records = self.store.get_many([f"p/{r}" for r in others])
        ahead: list[tuple[int, str, ProgressRecord]] = []
        for r in others:
            raw = records.get(f"p/{r}")
            if raw is None:
                continue
            try:
                rec = ProgressRecord.from_json(raw)
            except (ValueError, TypeError):
                continue
            for name, seq in sorted(rec.g.items()):
                mine = own.get(name)
                if mine is not None and int(seq) > mine.seq:
                    ahead.append((r, name, rec))
                    break
        if not ahead:
            return None
        here = self.store.get_many([f"{key}/at/{r}" for r, _, _ in ahead])
        for r, name, rec in ahead:
            if f"{key}/at/{r}" in here:
                continue
            op = rec.op.get(name, "") or "collective"
            why = (f"rank {r} is past it, in its {op} #{rec.g[name]} of process group "
                   f"{name!r} while rank {self.rank} waits at #{own[name].seq} there: the "
                   f"ranks did not make the same detector calls (rank {r} skipped this one or "
                   "made it on another iteration, or the waiting ranks made one more) and it "
                   "waits for them in its training; straggler detection turns off on every "
                   "rank")
            self.store.put(leave_key(r), why)  # its watchdog reads it: it leaves (see below)
            return why
        return None


def leave_key(rank: int) -> str:
    """The key that asks ``rank``, past a report its peers wait in, to leave the detector's
    group: its watchdog polls it while the rank makes no progress (`HangWatchdog.on_leave`)."""
    return f"absent/leave/{rank}"
