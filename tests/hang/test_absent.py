"""`PeersPast`: which peer a report's collective waits for in vain, from the hang records; and
the watchdog's side: a rank asked to leave does so once, only while it makes no progress.
In-memory store, no process group (the live case: tests/test_fault_matrix.py)."""

from __future__ import annotations

import torch.distributed as dist
from straggler.hang import HangOptions, HangWatchdog, LocalProgress, ProgressRecord, ProgressStore
from straggler.hang.absent import PeersPast, leave_key
from straggler.hang.progress import GroupState

from _clock import FakeClock


def _publish(store: ProgressStore, rank: int, seq: int, op: str = "allreduce") -> None:
    store.put(f"p/{rank}", ProgressRecord(r=rank, g={"0": seq}, op={"0": op}).to_json())


def _peers(store: ProgressStore, rank: int, seq: int) -> PeersPast:
    return PeersPast(store, rank, [0, 1, 2], groups=lambda: {"0": GroupState(seq)})


def test_a_peer_past_the_collective_is_named_and_asked_to_leave():
    store = ProgressStore(dist.HashStore(), "hang")
    for rank, seq in ((0, 3), (1, 4), (2, 3)):  # rank 1 went on to its 4th training collective
        _publish(store, rank, seq)
    reader, other = _peers(store, 0, 3), _peers(store, 2, 3)
    why = reader(13)
    assert why is not None and why.startswith("rank 1 is past it, in its allreduce #4 of "
                                              "process group '0' while rank 0 waits at #3")
    assert store.get(leave_key(1)) == why.encode()
    assert other(13) == why  # the second rank to ask reads the reader's verdict
    assert _peers(store, 2, 3)(-13) == why  # a failed collective: the verdict, if any
    assert _peers(store, 2, 3)(-14) is None
    assert store.add("absent/13/readers", 0) == 2  # one reader only


def test_nobody_past_and_a_rank_waiting_with_us_are_no_verdict():
    store = ProgressStore(dist.HashStore(), "hang")
    for rank in range(3):
        _publish(store, rank, 3)
    assert _peers(store, 0, 3)(5) is None  # rank 1 is late, not past: wait on
    # Rank 2 waits in this collective too (marked) although its record is ahead (say a
    # collective of its own on another thread): never taken for one that went on.
    _publish(store, 2, 9)
    assert _peers(store, 2, 3)(6) is None  # rank 2 marks itself first
    assert _peers(store, 0, 3)(6) is None
    assert store.get(leave_key(2)) is None
    # A peer without a record (hang detection off there) gives no verdict either.
    lone = ProgressStore(dist.HashStore(), "hang")
    assert _peers(lone, 0, 3)(1) is None



class _Section:
    name, depth, start_ns = "step", 0, 0


def test_the_watchdog_leaves_once_when_asked_while_it_makes_no_progress():
    clock, seqs = FakeClock(100.0), {"0": 4}
    store = ProgressStore(dist.HashStore(), "hang")
    progress = LocalProgress(1, "node", "", lambda: [_Section()], lambda: 7,
                             lambda: {k: GroupState(v) for k, v in seqs.items()}, clock=clock)
    dog = HangWatchdog(HangOptions(timeout_s=60.0), progress, store, 1, 3, lambda f: None,
                       clock=clock, wall=clock)
    left: list[str] = []
    dog.on_leave = left.append
    store.put(leave_key(1), "peers wait")
    dog.tick()  # progress just seen: not stalled, no poll
    assert left == []
    for _ in range(4):
        clock.advance(1.0)
        dog.tick()
    assert left == ["peers wait"] and dog.on_leave is None  # once
