"""TimerEngine's CUDA backend end to end against the simulated driver (tests/sim).

Two ways to get durations from the simulator:
- idle stream: start, enqueue work, stop. The duration is the work plus the Python time between
  start() and the enqueue, so it is at least the work and only bounded from above loosely.
- queued: a long "prefix" of work first, then start/enqueue/stop pairs. While the stream is busy,
  each event completes at the stream's tail, so a pair measures exactly the work enqueued between
  its events, however slow the Python loop is (as long as it outruns the prefix, which is
  hundreds of times longer than the loop needs).
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from straggler import _core

from sim.simcuda import run_python

# Python between start() and the enqueue adds to an idle-stream duration; on 2 busy cores that
# can reach tens of ms, so upper bounds are loose. Lower bounds are exact.
IDLE_SLACK_MS = 1000.0
# Events complete at times in ms since boot (~1e8, in double), and elapsed time is a float32.
QUEUED_ATOL_MS = 1e-3


def queued_pairs(engine: _core.TimerEngine, sim, name: str, work_ms, stream: int = 0,
                 prefix_ms: float = 500.0) -> None:
    """Time each of ``work_ms`` behind ``prefix_ms`` of work, so durations equal the work."""
    sim.enqueue(stream, prefix_ms)
    t = engine.timer_id(name)
    for ms in work_ms:
        engine.start(t, stream)
        sim.enqueue(stream, ms)
        engine.stop(t, stream)


@pytest.fixture
def engine(sim_cuda):
    eng = _core.TimerEngine("cuda")
    yield eng
    eng.close()


def test_driver_resolves_through_cuGetProcAddress_with_pinned_abi(engine, sim_cuda):
    ok, reason = _core.cuda_status()
    assert ok, reason
    assert "cuGetProcAddress_v2" in reason
    engine.start("a")
    engine.stop("a")
    engine.flush()
    engine.close()
    # The versioned ABIs, never the legacy unversioned exports.
    assert sim_cuda.calls("cuEventDestroy_v2") >= 2
    assert sim_cuda.calls("cuEventDestroy") == 0
    assert sim_cuda.calls("cuDevicePrimaryCtxRelease_v2") == 1
    assert sim_cuda.calls("cuDevicePrimaryCtxRelease") == 0


def test_auto_backend_is_cuda_when_a_device_is_there(sim_cuda):
    with _core.TimerEngine() as eng:
        assert eng.backend == "cuda"
        assert eng.capacity == 8192


def test_idle_stream_duration_covers_the_work(engine, sim_cuda):
    engine.start("step")
    sim_cuda.enqueue(0, 40.0)
    engine.stop("step")
    engine.flush()
    (d,) = engine.durations("step")
    assert 40.0 - QUEUED_ATOL_MS <= d < 40.0 + IDLE_SLACK_MS


def test_queued_durations_equal_the_work(engine, sim_cuda):
    work = [0.25 * (i + 1) for i in range(8)]
    queued_pairs(engine, sim_cuda, "fwd", work)
    engine.flush()
    np.testing.assert_allclose(engine.durations("fwd"), work, rtol=0, atol=QUEUED_ATOL_MS)


def test_durations_scale_with_the_slowdown_factor():
    # SIMCUDA_SLOWDOWN is read once per process: a fresh one with 3x slower work.
    out = run_python(
        """
import json, sys; sys.path.insert(0, "tests")
from sim.simcuda import SimCuda
from straggler import _core
sim = SimCuda()
assert sim.slowdown == 3.0
eng = _core.TimerEngine("cuda")
sim.enqueue(0, 300.0)
for ms in (1.0, 2.0, 5.0):
    eng.start("k"); sim.enqueue(0, ms); eng.stop("k")
eng.start("idle"); eng.stop("idle")  # nothing between: waits behind the queue, measures ~0
eng.flush()
print(json.dumps([eng.durations("k").tolist(), eng.durations("idle").tolist()]))
""",
        SIMCUDA_SLOWDOWN=3,
    )
    k, idle = json.loads(out)
    np.testing.assert_allclose(k, [3.0, 6.0, 15.0], rtol=0, atol=QUEUED_ATOL_MS)
    np.testing.assert_allclose(idle, [0.0], rtol=0, atol=QUEUED_ATOL_MS)


def test_harvest_before_completion_leaves_the_pair_pending(engine, sim_cuda):
    engine.start("slow")
    sim_cuda.enqueue(0, 5000.0)  # never waited for: the fixture resets the stream afterwards
    engine.stop("slow")
    # The work ends 5 s after the enqueue; these calls take microseconds, even on a busy machine.
    assert engine.harvest() == 0
    assert engine.pending() == 1
    assert engine.durations("slow").size == 0
    names, table = engine.summaries()  # harvests, does not wait
    assert names == [] and table.shape == (0, 7)
    assert engine.pending() == 1


def test_flush_completes_pending_pairs(engine, sim_cuda):
    for stream in (0, 11, 12):
        engine.start(f"s{stream}", stream)
        sim_cuda.enqueue(stream, 50.0)
        engine.stop(f"s{stream}", stream)
    assert engine.pending() == 3
    engine.flush()
    assert engine.pending() == 0
    for stream in (0, 11, 12):
        (d,) = engine.durations(f"s{stream}")
        assert d >= 50.0 - QUEUED_ATOL_MS
    assert engine.harvest() == 0  # nothing counted twice


def test_flush_waits_for_this_engines_events_only(engine, sim_cuda):
    sim_cuda.enqueue(99, 5000.0)  # someone else's long work on another stream
    engine.start("mine", 7)
    sim_cuda.enqueue(7, 30.0)
    engine.stop("mine", 7)
    t0 = time.monotonic()
    engine.flush()
    # A device- or context-wide wait would take the full 5 s; ours needs ~30 ms.
    assert time.monotonic() - t0 < 2.5
    assert engine.durations("mine").size == 1


def test_pair_across_two_streams_waits_for_both(engine, sim_cuda):
    sim_cuda.enqueue(1, 1000.0)
    engine.start("x", 1)          # completes when stream 1 drains, ~1 s from now
    engine.stop("x", 2)           # stream 2 is idle: completes at once
    assert engine.harvest() == 0  # the start is not finished yet
    engine.flush()
    (d,) = engine.durations("x")
    assert d <= QUEUED_ATOL_MS    # stop completed before start: a non-positive interval


def test_event_pool_is_reused_over_100k_pairs(engine, sim_cuda):
    t = engine.timer_id("hot")
    live_before = sim_cuda.live_events()
    for _ in range(100_000):
        engine.start(t)
        engine.stop(t)
    engine.flush()
    created = sim_cuda.calls("cuEventCreate")
    # stop() harvests finished pairs once 256 are pending, so the pool stays near 2 x 256.
    assert created <= 2 * 256 + 4
    assert sim_cuda.live_events() - live_before == created
    assert engine.durations(t).size == engine.capacity  # 100k samples, newest 8192 kept


def test_event_pool_does_not_grow_with_regular_harvests(engine, sim_cuda):
    t = engine.timer_id("hot")
    for i in range(20_000):
        engine.start(t)
        engine.stop(t)
        if i % 10 == 9:
            engine.harvest()
    assert sim_cuda.calls("cuEventCreate") <= 2 * 10 + 2


def test_ring_buffer_keeps_the_newest_capacity_samples(sim_cuda):
    with _core.TimerEngine("cuda", capacity=16) as eng:
        work = [0.125 * (i + 1) for i in range(40)]
        queued_pairs(eng, sim_cuda, "r", work)
        eng.flush()
        np.testing.assert_allclose(eng.durations("r"), work[-16:], rtol=0, atol=QUEUED_ATOL_MS)
        _, table = eng.summaries()
        assert table[0, _core.SUMMARY_COLUMNS.index("NUM")] == 16
        # A new window after the ring wrapped: a partial, then a wrapped ring again.
        eng.reset()
        more = [0.5, 0.75, 1.0]
        queued_pairs(eng, sim_cuda, "r", more)
        eng.flush()
        np.testing.assert_allclose(eng.durations("r"), more, rtol=0, atol=QUEUED_ATOL_MS)
        queued_pairs(eng, sim_cuda, "r", work[:20])
        eng.flush()
        np.testing.assert_allclose(eng.durations("r"), (more + work[:20])[-16:], rtol=0,
                                   atol=QUEUED_ATOL_MS)


def test_reset_starts_a_new_window_and_keeps_pending_pairs(engine, sim_cuda):
    queued_pairs(engine, sim_cuda, "w", [1.0, 2.0], prefix_ms=20.0)
    engine.flush()
    assert engine.durations("w").size == 2
    engine.start("w")
    sim_cuda.enqueue(0, 200.0)
    engine.stop("w")
    engine.reset()
    assert engine.durations("w").size == 0
    assert engine.pending() == 1
    engine.flush()
    (d,) = engine.durations("w")  # lands in the new window
    assert d >= 200.0 - QUEUED_ATOL_MS


def test_close_releases_events_and_the_context(sim_cuda):
    live_before = sim_cuda.live_events()  # earlier tests may have leaked on purpose
    eng = _core.TimerEngine("cuda")
    assert sim_cuda.primary_ctx_refs(0) == 1
    eng.start("a")
    sim_cuda.enqueue(0, 100.0)
    eng.stop("a")
    eng.start("open")  # still open at close
    eng.close()
    eng.close()  # idempotent
    assert eng.closed
    assert sim_cuda.live_events() == live_before
    assert sim_cuda.primary_ctx_refs(0) == 0
    with pytest.raises(RuntimeError, match="closed"):
        eng.start("a")
    del eng  # destruction after close does nothing more
    assert sim_cuda.primary_ctx_refs(0) == 0


def test_engine_puts_its_context_back_when_someone_changes_it(engine, sim_cuda):
    engine.start("a")
    engine.stop("a")
    sim_cuda._lib.cuCtxSetCurrent(None)  # e.g. another library cleared this thread's context
    engine.start("a")
    engine.stop("a")
    engine.flush()
    assert engine.durations("a").size == 2


def test_dlsym_fallback_binds_the_versioned_exports():
    # SIMCUDA_PROC_ADDRESS=0: cuGetProcAddress finds nothing, so the table comes from dlsym of
    # the pinned symbol names (cuEventDestroy_v2, cuDevicePrimaryCtxRelease_v2).
    out = run_python(
        """
import sys; sys.path.insert(0, "tests")
from sim.simcuda import SimCuda
from straggler import _core
sim = SimCuda()
ok, reason = _core.cuda_status()
assert ok and "via dlsym" in reason, reason
with _core.TimerEngine("cuda") as eng:
    eng.start("a"); eng.stop("a"); eng.flush()
    assert eng.durations("a").size == 1
print(sim.calls("cuEventDestroy_v2"), sim.calls("cuEventDestroy"),
      sim.calls("cuDevicePrimaryCtxRelease_v2"), sim.calls("cuDevicePrimaryCtxRelease"))
""",
        SIMCUDA_PROC_ADDRESS=0,
    )
    destroy_v2, destroy_v1, release_v2, release_v1 = map(int, out.split())
    assert destroy_v2 >= 2 and destroy_v1 == 0
    assert release_v2 == 1 and release_v1 == 0


def test_cancel_closes_the_timer_and_keeps_no_sample(engine, sim_cuda):
    """cancel() (a section whose body raised): the timer closes, nothing is stored, the start
    event goes back to the pool and the timer starts again."""
    t = engine.timer_id("step")
    engine.start(t, 0)
    sim_cuda.enqueue(0, 2.0)
    engine.stop(t, 0)  # one whole pair: its events are pooled from now on
    engine.flush()
    live = sim_cuda.live_events()
    engine.start(t, 0)
    sim_cuda.enqueue(0, 2.0)
    engine.cancel(t, 0)
    assert engine.pending() == 0
    engine.start(t, 0)  # closed: it starts again
    sim_cuda.enqueue(0, 2.0)
    engine.stop(t, 0)
    engine.flush()
    assert len(engine.durations(t)) == 2
    assert sim_cuda.live_events() == live  # the cancelled start event was reused, not leaked
    with pytest.raises(ValueError, match="'step' was not started"):
        engine.cancel("step", 0)
