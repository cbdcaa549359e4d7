"""Busy time on the simulated driver: a section's GPU sample excludes host stalls, idle streams
and collectives (docs/engine.md, "Busy time").

The simulated stream runs on the real clock: enqueued work ends `ms` after the later of now and
the stream's previous work, so a stream goes idle while the host sleeps, as a GPU does. Sleeps
here are the host stall under test; the assertions compare busy time with the stall with wide
margins (a loaded machine only makes host time longer, never busy time).
"""

from __future__ import annotations

import time

import pytest
from straggler import _core

STREAM = 7


@pytest.fixture
def engine(sim_cuda):
    with _core.TimerEngine("cuda") as eng:
        yield eng


def gemm(eng, sim, ms: float, op_timer: int = -1) -> None:
    """One compute op as the observer reports it: `ms` of GPU work between begin and end."""
    token = eng.op_begin(STREAM)
    sim.enqueue(STREAM, ms)
    eng.op_end(token, op_timer, STREAM)


def test_host_stall_between_ops_is_not_busy_time(engine, sim_cuda):
    sec = engine.timer_id("step")
    engine.set_busy(sec)
    start = time.perf_counter()
    engine.start(sec, STREAM)
    gemm(engine, sim_cuda, 2.0)
    time.sleep(0.05)
    gemm(engine, sim_cuda, 2.0)
    engine.stop(sec, STREAM)
    host_ms = (time.perf_counter() - start) * 1e3
    engine.flush()
    (busy,) = engine.durations(sec)
    assert host_ms >= 50.0
    assert 4.0 <= busy < 20.0  # ~4 ms of work; the 50 ms stall is not in it


def test_ops_queued_behind_busy_gpu_count_their_own_work_only(engine, sim_cuda):
    sec, op = engine.timer_id("step"), engine.timer_id("op")
    engine.set_busy(sec)
    engine.start(sec, STREAM)
    for _ in range(3):
        gemm(engine, sim_cuda, 5.0, op)  # queued back to back: the GPU never idles
    engine.stop(sec, STREAM)
    engine.flush()
    ops = engine.durations(op)
    assert len(ops) == 3 and all(4.9 <= ms < 10.0 for ms in ops)
    assert engine.durations(sec)[0] == pytest.approx(sum(ops))


def test_section_without_gpu_work_stores_no_sample(engine, sim_cuda):
    sec = engine.timer_id("cpu_model")
    engine.set_busy(sec)
    for _ in range(3):
        engine.start(sec, STREAM)
        time.sleep(0.002)  # host work only: no op reports CUDA work
        engine.stop(sec, STREAM)
    engine.flush()
    assert len(engine.durations(sec)) == 0
    assert engine.idle_entries() == {"cpu_model": 3}
    names, _ = engine.summaries()
    assert "cpu_model" not in names
    engine.reset()
    assert engine.idle_entries() == {}


def test_collective_time_is_excluded(engine, sim_cuda):
    sec = engine.timer_id("forward")
    engine.set_busy(sec)
    engine.start(sec, STREAM)
    gemm(engine, sim_cuda, 2.0)
    sim_cuda.enqueue(STREAM, 40.0)  # the all-reduce's kernel (or the wait for it)
    engine.comm_end(STREAM)
    gemm(engine, sim_cuda, 2.0)
    engine.stop(sec, STREAM)
    engine.flush()
    (busy,) = engine.durations(sec)
    assert 4.0 <= busy < 20.0  # the 40 ms collective is in no segment


def test_saturated_section_without_ops_is_stream_time(engine, sim_cuda):
    """No observer: work still queued ahead of the last mark at stop is busy by construction."""
    sec = engine.timer_id("graph")
    engine.set_busy(sec)
    sim_cuda.enqueue(STREAM, 30.0)  # earlier work: the GPU is behind the host at start
    engine.start(sec, STREAM)
    sim_cuda.enqueue(STREAM, 10.0)  # e.g. a CUDA graph replay: no op is reported
    engine.stop(sec, STREAM)
    engine.flush()
    (busy,) = engine.durations(sec)
    assert 9.9 <= busy < 40.0  # the section's 10 ms, not the 30 ms queued before it
    # Started on an idle stream: the GPU may have idled inside, so no sample.
    engine.start(sec, STREAM)
    sim_cuda.enqueue(STREAM, 1.0)
    engine.stop(sec, STREAM)
    engine.flush()
    assert len(engine.durations(sec)) == 1
    assert engine.idle_entries() == {"graph": 1}


def test_nested_scopes_each_get_their_ops(engine, sim_cuda):
    outer, inner = engine.timer_id("step"), engine.timer_id("forward")
    engine.set_busy(outer)
    engine.set_busy(inner)
    engine.start(outer, STREAM)
    gemm(engine, sim_cuda, 2.0)
    engine.start(inner, STREAM)
    gemm(engine, sim_cuda, 3.0)
    engine.stop(inner, STREAM)
    time.sleep(0.02)
    gemm(engine, sim_cuda, 2.0)
    engine.stop(outer, STREAM)
    engine.flush()
    (f,) = engine.durations(inner)
    (s,) = engine.durations(outer)
    assert 3.0 <= f < 10.0
    assert 7.0 <= s < 20.0 and s >= f


def test_ops_of_another_thread_join_the_only_open_scope(engine, sim_cuda):
    """Autograd runs backward ops on its own thread while the training thread waits."""
    import threading

    sec = engine.timer_id("step")
    engine.set_busy(sec)
    engine.start(sec, STREAM)
    worker = threading.Thread(target=gemm, args=(engine, sim_cuda, 3.0))
    worker.start()
    worker.join()
    engine.stop(sec, STREAM)
    engine.flush()
    (busy,) = engine.durations(sec)
    assert 3.0 <= busy < 10.0


def test_op_outside_any_scope_is_not_timed(engine, sim_cuda):
    assert engine.op_begin(STREAM) == -1
    engine.op_end(-1, -1, STREAM)  # a no-op
    engine.comm_end(STREAM)
    assert engine.open_scopes() == 0


def test_events_return_to_the_pool_and_close_frees_them(sim_cuda):
    eng = _core.TimerEngine("cuda")
    sec = eng.timer_id("step")
    eng.set_busy(sec)
    for _ in range(50):
        eng.start(sec, STREAM)
        gemm(eng, sim_cuda, 0.01)
        time.sleep(0.0005)
        gemm(eng, sim_cuda, 0.01)
        eng.stop(sec, STREAM)
        time.sleep(0.0005)
        eng.harvest()  # as reports do; stop() also harvests once 256 segments wait
    eng.flush()
    assert eng.pending() == 0
    assert len(eng.durations(sec)) == 50
    assert sim_cuda.live_events() <= 8  # a few pooled events, not one per op
    eng.start(sec, STREAM)
    token = eng.op_begin(STREAM)  # left open at close: freed anyway
    eng.close()
    assert sim_cuda.live_events() == 0
    eng.op_end(token, -1, STREAM)  # after close: ignored


def test_driver_error_in_op_end_raises_and_keeps_the_scope_consistent(engine, sim_cuda):
    from sim.simcuda import CUDA_ERROR_LAUNCH_FAILED

    sec = engine.timer_id("step")
    engine.set_busy(sec)
    engine.start(sec, STREAM)
    token = engine.op_begin(STREAM)
    sim_cuda.fail("cuEventRecord", CUDA_ERROR_LAUNCH_FAILED, count=1)
    with pytest.raises(_core.CudaError, match="cuEventRecord"):
        engine.op_end(token, -1, STREAM)
    gemm(engine, sim_cuda, 1.0)
    engine.stop(sec, STREAM)
    engine.flush()
    assert len(engine.durations(sec)) == 1
    assert engine.open_scopes() == 0


def test_host_backend_busy_time_is_the_ops_host_time():
    with _core.TimerEngine("host") as eng:
        sec, op = eng.timer_id("step"), eng.timer_id("op")
        eng.set_busy(sec)
        eng.start(sec)
        token = eng.op_begin()
        time.sleep(0.002)
        eng.op_end(token, op)
        time.sleep(0.03)  # between ops: not in the sample
        eng.stop(sec)
        (busy,) = eng.durations(sec)
        assert 2.0 <= busy < 25.0
        assert eng.durations(op)[0] == pytest.approx(busy)


def test_bad_arguments_are_named(engine):
    with pytest.raises(ValueError, match="op_timer=-5"):
        engine.op_end(0, -5, STREAM)
    with pytest.raises(ValueError, match="token=12345"):
        sec = engine.timer_id("s")
        engine.set_busy(sec)
        engine.start(sec, STREAM)
        try:
            engine.op_end(12345, -1, STREAM)
        finally:
            engine.stop(sec, STREAM)
    with pytest.raises(ValueError, match="timer=99"):
        engine.set_busy(99)


def test_cancelled_scope_stores_nothing_but_its_ops_and_parent_keep_their_work(engine, sim_cuda):
    """cancel() of a busy scope (its section's body raised): no sample and no idle entry for
    it; the ops it saw keep their per-op samples and the enclosing scope's sum keeps them."""
    outer, inner, op = engine.timer_id("outer"), engine.timer_id("inner"), engine.timer_id("op")
    engine.set_busy(outer)
    engine.set_busy(inner)
    engine.start(outer, STREAM)
    engine.start(inner, STREAM)
    gemm(engine, sim_cuda, 3.0, op)
    engine.cancel(inner, STREAM)
    engine.stop(outer, STREAM)
    engine.start(inner, STREAM)  # an entry that saw no work and raised: no idle entry either
    engine.cancel(inner, STREAM)
    engine.flush()
    assert list(engine.durations(inner)) == []
    assert "inner" not in engine.idle_entries()
    (op_ms,) = engine.durations(op)
    assert engine.durations(outer)[0] == pytest.approx(op_ms)
    assert engine.open_scopes() == 0
