"""ReportDeadline: ranks agree on a report iteration once the deadline passes, with no
collective per step (pure: a fake group, fake clocks, no process group)."""

from __future__ import annotations

import threading
import time

import pytest
from _clock import FakeClock

from straggler.dist.deadline import DEADLINE_FACTOR, MARGIN_ITERS, ReportDeadline


class _Handle:
    def __init__(self, group, index):
        self.group, self.index = group, index

    def done(self):
        return self.group.complete(self.index)

    def wait(self):
        with self.group.cond:
            self.group.cond.wait_for(lambda: self.group.complete(self.index), timeout=10)
            if self.group.error is not None:
                raise self.group.error
            return [max(self.group.posts[self.index].values())]


class _Group:
    """A MAX reduction among `size` fake ranks: the k-th post of each rank meets the others'."""

    def __init__(self, size):
        self.size = size
        self.posts: list[dict[int, float]] = []
        self.counts = [0] * size
        self.cond = threading.Condition()
        self.error = None

    def complete(self, index):
        return self.error is not None or len(self.posts[index]) == self.size

    def post_for(self, rank):
        def post(value):
            with self.cond:
                index = self.counts[rank]
                self.counts[rank] += 1
                while len(self.posts) <= index:
                    self.posts.append({})
                self.posts[index][rank] = value
                self.cond.notify_all()
                return _Handle(self, index)
        return post


class _Rank:
    def __init__(self, group, rank, clock):
        self.iter = 0
        self.deadline = ReportDeadline(group.post_for(rank), lambda: self.iter, clock=clock,
                                       wait_s=10)


def _wait_until(condition, timeout=10.0):
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.005)


def test_alone_the_deadline_is_the_ranks_own_clock():
    clock = FakeClock()
    deadline = ReportDeadline(None, lambda: 0, clock=clock)
    deadline.start_window(1.0)
    assert deadline.due(5) is None
    clock.advance(DEADLINE_FACTOR * 1.0)
    assert deadline.due(6) == 6
    assert deadline.due(7) is None  # once per window
    assert deadline.triggered == 1


def test_ranks_agree_on_the_largest_iteration_plus_the_margin():
    group, clock = _Group(2), FakeClock()
    ranks = [_Rank(group, r, clock) for r in range(2)]
    for r in ranks:
        r.deadline.start_window(1.0)
    ranks[0].iter, ranks[1].iter = 10, 11
    assert [r.deadline.due(r.iter) for r in ranks] == [None, None]  # clock not passed yet
    clock.advance(1.3)
    for r in ranks:
        r.deadline.poke()
    _wait_until(lambda: all(r.deadline._result is not None for r in ranks))
    assert [r.deadline.due(r.iter) for r in ranks] == [11 + MARGIN_ITERS] * 2
    for r in ranks:
        r.deadline.close()


def test_a_rank_waits_at_its_margin_only_for_the_peers_watcher_not_its_loop():
    group = _Group(2)
    clocks = [FakeClock(), FakeClock()]
    ranks = [_Rank(group, r, clocks[r]) for r in range(2)]
    for r in ranks:
        r.deadline.start_window(1.0)
    ranks[0].iter = 20
    clocks[0].advance(2.0)
    ranks[0].deadline.poke()
    _wait_until(lambda: ranks[0].deadline._posted_iter == 20)
    assert ranks[0].deadline.due(21) is None  # result not in, margin not reached: no wait
    ranks[1].iter = 21

    def later():  # the peer's clock passes while rank 0 waits; its loop stays where it is
        time.sleep(0.2)
        clocks[1].advance(2.0)
        ranks[1].deadline.poke()

    threading.Thread(target=later).start()
    assert ranks[0].deadline.due(20 + MARGIN_ITERS) == 21 + MARGIN_ITERS
    _wait_until(lambda: ranks[1].deadline._result is not None)
    assert ranks[1].deadline.due(21) == 21 + MARGIN_ITERS
    for r in ranks:
        r.deadline.close()


def test_a_report_finishes_the_window_so_the_sequence_stays_matched():
    group, clock = _Group(2), FakeClock()
    ranks = [_Rank(group, r, clock) for r in range(2)]
    for r in ranks:
        r.deadline.start_window(100.0)
    done = []
    threads = [threading.Thread(target=lambda r=r: done.append(r.deadline.finish_window()))
               for r in ranks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(done) == 2 and group.counts == [1, 1]
    for r in ranks:  # the next window starts clean: one reduction each again
        r.deadline.start_window(1.0)
        r.iter = 5
    clock.advance(2.0)
    for r in ranks:
        r.deadline.poke()
    _wait_until(lambda: all(r.deadline._result is not None for r in ranks))
    assert group.counts == [2, 2]
    assert [r.deadline.due(5) for r in ranks] == [5 + MARGIN_ITERS] * 2
    for r in ranks:
        r.deadline.close()


def _posted_alone() -> tuple[_Group, _Rank]:
    """Rank 0 of two, past its deadline: its watcher has posted; the peer never does."""
    group, clock = _Group(2), FakeClock()
    rank = _Rank(group, 0, clock)
    rank.deadline.start_window(1.0)
    clock.advance(2.0)
    rank.deadline.poke()
    _wait_until(lambda: rank.deadline._posted_iter is not None)
    return group, rank


def test_a_failed_reduction_is_raised_in_the_training_thread():
    group, rank = _posted_alone()
    with group.cond:
        group.error = RuntimeError("peer gone")
        group.cond.notify_all()
    _wait_until(lambda: rank.deadline._error is not None)
    with pytest.raises(RuntimeError, match="peer gone"):
        rank.deadline.due(1)
    rank.deadline.close()


def test_close_stops_the_watcher_thread():
    group, clock = _Group(2), FakeClock()
    rank = _Rank(group, 0, clock)
    rank.deadline.start_window(1.0)
    thread = rank.deadline._thread
    assert thread is not None and thread.is_alive()
    rank.deadline.close()
    assert not thread.is_alive()


def test_close_stops_the_watcher_while_its_reduction_is_pending():
    # The peer never posts: the watcher waits for a result that does not come. It must still
    # stop at close (and so at interpreter exit, lifecycle.py), not stay inside the reduction.
    _, rank = _posted_alone()
    thread = rank.deadline._thread
    assert thread is not None
    rank.deadline.close()
    assert not thread.is_alive()
    assert rank.deadline._result is None and rank.deadline._error is None


def test_a_post_that_raises_is_handed_over_once_and_close_still_returns():
    # The deadline's own group closed under it (a job destroying its process group while the
    # watcher's deadline passes): every post raises. The watcher must hand the error to the
    # training thread once and wait, not retry while holding its lock: it used to spin there,
    # and `close` (from destroy_process_group) waited for the lock forever (an attached DDP
    # job hung at exit, 1 run in 4 of its test on a loaded machine).
    calls = []

    def post(value):
        calls.append(value)
        raise RuntimeError("Comm.all_reduce_async() called after close()")

    clock = FakeClock()
    deadline = ReportDeadline(post, lambda: 7, clock=clock, wait_s=10)
    deadline.start_window(1.0)
    clock.advance(2.0)
    deadline.poke()
    _wait_until(lambda: deadline._error is not None)
    time.sleep(0.2)  # a spinning watcher would post again and again meanwhile
    assert calls == [7.0]
    with pytest.raises(RuntimeError, match="called after close"):  # the training thread's
        deadline.due(8)
    closer = threading.Thread(target=deadline.close, daemon=True)
    closer.start()
    closer.join(timeout=10)
    assert not closer.is_alive(), "close() waited for the watcher's lock"
    assert deadline._thread is not None and not deadline._thread.is_alive()
