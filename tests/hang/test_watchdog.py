"""`HangWatchdog` with an in-memory store and a fake clock: the publish rate, the reporter's
protocol, and a store that fails or goes away (training never sees it)."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
import torch.distributed as dist
from straggler.hang import HangOptions, HangWatchdog, LocalProgress, ProgressRecord, ProgressStore
from straggler.hang.progress import GroupState
from straggler.hang.watchdog import process_exited

from _clock import FakeClock


class _Section:
    def __init__(self, name: str) -> None:
        self.name, self.depth, self.start_ns = name, 0, 0


class _Rank:
    """One simulated rank: its sections, step, group sequence numbers and watchdog."""

    def __init__(self, rank: int, world: int, store: Any, clock: FakeClock,
                 options: HangOptions, found: list[Any]) -> None:
        self.seqs = {"0": 0}
        self.section = _Section("step")
        self.step = 0
        self.progress = LocalProgress(rank, "node", "", lambda: [self.section],
                                      lambda: self.step, lambda: _groups_of(self),
                                      thread=threading.get_ident(), clock=clock)
        self.store = ProgressStore(store, "hang")
        self.dog = HangWatchdog(options, self.progress, self.store, rank, world, found.append,
                                clock=clock, wall=clock)


def _groups_of(rank: _Rank) -> dict[str, GroupState]:
    return {name: GroupState(seq) for name, seq in rank.seqs.items()}


class _CountingStore(dist.Store):
    """A HashStore that counts writes of progress records."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = dist.HashStore()
        self.progress_writes = 0

    def set(self, key: str, value: Any) -> None:
        self.progress_writes += "/p/" in key
        self.inner.set(key, value)

    def get(self, key: str) -> bytes:
        return self.inner.get(key)

    def add(self, key: str, n: int) -> int:
        return self.inner.add(key, n)

    def check(self, keys: list[str]) -> bool:
        return self.inner.check(keys)

    def multi_get(self, keys: list[str]) -> list[bytes]:
        return self.inner.multi_get(keys)


class _BrokenStore(dist.Store):
    """Every operation fails, as a store whose server went away does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _gone(self, *args: Any) -> Any:
        self.calls += 1
        raise RuntimeError("Connection reset by peer")

    set = get = add = check = multi_get = _gone


def _world(n: int, store: Any, clock: FakeClock, **kw: Any) -> tuple[list[_Rank], list[Any]]:
    found: list[Any] = []
    options = HangOptions(timeout_s=10.0, **kw)
    return [_Rank(r, n, store, clock, options, found) for r in range(n)], found


def _tick_all(ranks: list[_Rank], clock: FakeClock, seconds: int) -> None:
    for _ in range(seconds):
        clock.advance(1.0)
        for r in ranks:
            r.dog.tick()


def test_each_rank_publishes_at_most_once_per_second() -> None:
    store, clock = _CountingStore(), FakeClock(100.0)
    ranks, _ = _world(4, store, clock)
    for _ in range(20):  # 10 ticks per second, progress every tick
        clock.advance(0.1)
        for r in ranks:
            r.step += 1
            r.seqs["0"] += 1
            r.dog.tick()
    assert store.progress_writes <= 4 * 3  # 2 s of ticks: 2 writes per rank (+1 at start)


def test_reporter_names_the_rank_that_stopped() -> None:
    store, clock = _CountingStore(), FakeClock(100.0)
    ranks, found = _world(3, store, clock)
    ranks[0].dog.stack_wait_s = 0.01  # one thread plays every rank: rank 1 cannot answer
    _tick_all(ranks, clock, 2)
    for r in ranks:  # everyone but rank 1 enters collective #1; rank 1 stops before it
        if r.progress.rank != 1:
            r.seqs["0"] = 1
    # A real rank's watchdog sees its main thread in all_reduce; here the record says so.
    orig = [r.progress.snapshot for r in ranks]
    for r, snap in zip(ranks, orig, strict=True):
        if r.progress.rank != 1:
            def waiting(with_location: bool = False, snap: Any = snap) -> ProgressRecord:
                rec = snap(with_location)
                if with_location:
                    rec.wait = {"op": "all_reduce", "group": "0", "seq": 1}
                return rec
            r.progress.snapshot = waiting  # type: ignore[method-assign]
    _tick_all(ranks, clock, 11)  # the timeout, then the alarm
    assert found, "no finding after the timeout"
    f = found[0]
    assert f.culprit_ranks == [1]
    assert f.waiting == (0, 2)
    assert f.culprits[0].state == "not arrived" and f.culprits[0].section == ""
    _tick_all(ranks, clock, 1)  # rank 1 answers the request for its stack
    assert store.inner.check(["hang/stack/1"])


def test_store_failure_turns_hang_detection_off_with_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock(100.0)
    broken = _BrokenStore()
    ranks, _ = _world(2, broken, clock)
    with caplog.at_level(logging.WARNING, logger="straggler"):
        _tick_all(ranks[:1], clock, 5)
    lines = [r for r in caplog.records if "hang detection is off" in r.getMessage()]
    assert len(lines) == 1
    assert ranks[0].store.failed
    assert broken.calls == 1  # nothing retried


def test_store_gone_stops_the_thread_and_costs_the_training_thread_nothing() -> None:
    broken = _BrokenStore()
    section = _Section("step")
    progress = LocalProgress(0, "node", "", lambda: [section], lambda: 0, lambda: {})
    dog = HangWatchdog(HangOptions(timeout_s=10.0, period_s=0.01), progress,
                       ProgressStore(broken, "hang"), 0, 2, lambda f: None)
    dog.start()
    deadline = time.monotonic() + 10
    while dog.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not dog.running  # it stopped by itself, the process goes on
    dog.close()


def test_close_stops_and_joins_the_daemon_thread() -> None:
    store = dist.HashStore()
    progress = LocalProgress(0, "node", "", lambda: [], lambda: 0, lambda: {})
    dog = HangWatchdog(HangOptions(timeout_s=10.0, period_s=0.01), progress,
                       ProgressStore(store, "hang"), 0, 2, lambda f: None)
    dog.start()
    assert dog.running and dog._thread is not None and dog._thread.daemon
    dog.close()
    assert not dog.running


def test_process_exited_checks_this_hosts_pids_only() -> None:
    import os

    me = ProgressRecord(r=0, node="here", pid=os.getpid())
    assert not process_exited(me, "here")
    assert not process_exited(ProgressRecord(r=0, node="there", pid=2**22 + 7), "here")
    assert process_exited(ProgressRecord(r=0, node="here", pid=2**22 + 7), "here")


def test_exit_action_makes_the_named_rank_exit_and_only_it() -> None:
    import json

    store, clock = _CountingStore(), FakeClock(100.0)
    ranks, _ = _world(3, store, clock, action="exit")
    exits: dict[int, list[str]] = {}
    for r in ranks:
        r.dog.on_exit = lambda why, rank=r.progress.rank: exits.setdefault(rank, []).append(why)
    _tick_all(ranks, clock, 6)  # every rank stalled past half the timeout: they poll
    ranks[0].store.put("finding", json.dumps({"episode": 1, "exit": [1], "reporter": 0}))
    _tick_all(ranks, clock, 2)
    assert list(exits) == [1] and len(exits[1]) == 1
    assert "named by rank 0" in exits[1][0]


def test_output_exit_asks_ft_to_exclude_the_node_then_exits_with_75() -> None:
    from straggler.hang import EXIT_CODE, HangOutput

    class _Bridge:
        enabled = True

        def __init__(self) -> None:
            self.asked: list[tuple[str, str]] = []

        def request_workload_action(self, action: str, description: str) -> bool:
            self.asked.append((action, description))
            return True

    codes: list[int] = []
    bridge = _Bridge()
    HangOutput(None, bridge, exit_process=codes.append).exit("rank 2 is named")
    assert codes == [EXIT_CODE] == [75]
    assert bridge.asked[0][0] == "exclude_node" and "rank 2 is named" in bridge.asked[0][1]


def test_a_failing_start_leaves_hang_detection_off_and_initialize_working(monkeypatch, caplog):
    """Fail open at the start too: an error while starting the watchdog is one log line."""
    from straggler import hang
    from straggler.hang import HangOptions, start_hang_detection

    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda group=None: 2)
    monkeypatch.setattr(dist, "get_rank", lambda group=None: 0)
    monkeypatch.setattr(hang, "open_job_store", lambda timeout_s: dist.HashStore())

    def broken() -> float:
        raise RuntimeError("injected")

    monkeypatch.setattr(hang, "_pg_timeout_s", broken)
    with caplog.at_level(logging.WARNING, logger="straggler"):
        dog = start_hang_detection(HangOptions(timeout_s=5.0), node="n", gpu=lambda: "",
                                   sections=list, step=lambda: 0, observers=None,
                                   ft_bridge=None)
    assert dog is None
    assert any("hang detection is off on this rank: RuntimeError: injected" in r.getMessage()
               for r in caplog.records)


def test_alarms_raised_by_the_stall_already_reported_bring_no_second_finding() -> None:
    """Every stalled rank adds one alarm; the reporter reports at the first. The later ones
    belong to the same stall: once the job goes on they are no new finding (in a loaded 4-rank
    run one came 3 s after the job went on, as it stopped again: a `stall` blaming nobody,
    before anyone had waited the timeout). A new stall is a new finding."""
    store, clock = _CountingStore(), FakeClock(100.0)
    ranks, found = _world(3, store, clock)
    ranks[0].dog.stack_wait_s = 0.01  # one thread plays every rank: rank 1 cannot answer
    seq = 0

    def stop_rank_1() -> None:  # the others enter collective #seq+1; rank 1 does not
        for r in ranks:
            r.seqs["0"] = seq + (r.progress.rank != 1)

    for r in ranks:  # a waiting rank's record says where it waits (see the test above)
        if r.progress.rank != 1:
            def waiting(with_location: bool = False, snap: Any = r.progress.snapshot,
                        r: _Rank = r) -> ProgressRecord:
                rec = snap(with_location)
                if with_location:
                    rec.wait = {"op": "all_reduce", "group": "0", "seq": r.seqs["0"]}
                return rec
            r.progress.snapshot = waiting  # type: ignore[method-assign]
    _tick_all(ranks, clock, 2)
    stop_rank_1()
    _tick_all(ranks, clock, 12)  # the timeout: rank 0 alarms and reports, then ranks 1 and 2
    assert [f.culprit_ranks for f in found] == [[1]]
    assert store.inner.add("hang/alarm", 0) == 3
    for _ in range(25):  # rank 1 arrives; the job goes on for 2.5 timeouts
        clock.advance(1.0)
        seq += 1
        for r in ranks:
            r.step += 1
            r.seqs["0"] = seq
            r.dog.tick()
    assert len(found) == 1, found[1].format()
    stop_rank_1()
    _tick_all(ranks, clock, 12)
    assert [f.culprit_ranks for f in found] == [[1], [1]]
