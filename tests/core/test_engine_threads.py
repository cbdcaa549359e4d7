"""TimerEngine used from several Python threads at once."""

from __future__ import annotations

import threading
import time

import pytest
from straggler import _core

THREADS = 4
PAIRS = 300
JOIN_TIMEOUT_S = 120


def run_threads(target, n: int = THREADS) -> None:
    errors: list[BaseException] = []

    def wrapped(i: int) -> None:
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - the main thread re-raises it
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=JOIN_TIMEOUT_S)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("backend", ["host", "cuda"])
def test_threads_time_shared_and_own_names_concurrently(sim_cuda, backend):
    live_before = sim_cuda.live_events()
    with _core.TimerEngine(backend) as eng:
        barrier = threading.Barrier(THREADS)

        def body(i: int) -> None:
            stream = 100 + i  # one stream per thread, as one CUDA stream per worker
            shared = eng.timer_id("shared")
            barrier.wait()
            for k in range(PAIRS):
                eng.start(shared, stream)        # the same name open in every thread at once
                eng.start(f"own{i}", stream)
                eng.stop(f"own{i}", stream)
                eng.stop(shared, stream)
                if k % 50 == 0:
                    eng.harvest()

        run_threads(body)
        eng.flush()
        assert eng.pending() == 0
        assert eng.durations("shared").size == THREADS * PAIRS
        for i in range(THREADS):
            assert eng.durations(f"own{i}").size == PAIRS
    if backend == "cuda":
        assert sim_cuda.live_events() == live_before


def test_one_thread_stops_only_its_own_start(sim_cuda):
    with _core.TimerEngine("host") as eng:
        eng.start("a")

        def other(_: int) -> None:
            with pytest.raises(ValueError, match="not started in this thread"):
                eng.stop("a")

        run_threads(other, 1)
        eng.stop("a")
        assert eng.durations("a").size == 1


def test_flush_releases_the_gil_while_it_waits(sim_cuda):
    with _core.TimerEngine("cuda") as eng:
        eng.start("long")
        sim_cuda.enqueue(0, 1500.0)
        eng.stop("long")
        done = {}

        def flusher(_: int) -> None:
            eng.flush()
            done["flush_end"] = time.monotonic()

        th = threading.Thread(target=flusher, args=(0,))
        th.start()
        time.sleep(0.05)
        # sleep() dropped the GIL; getting here before the flush ends means flush() let it go.
        resumed = time.monotonic()
        eng.start("meanwhile")  # the engine is usable from this thread during the flush
        eng.stop("meanwhile")
        th.join(timeout=JOIN_TIMEOUT_S)
        assert not th.is_alive()
        assert resumed < done["flush_end"]
        assert eng.durations("long").size == 1


def test_a_new_thread_does_not_inherit_a_dead_threads_open_timer():
    with _core.TimerEngine("host") as eng:
        run_threads(lambda _: eng.start("x"), 1)  # exits with "x" open
        # The system reuses thread ids (pthread_t) at once; each of these threads starts afresh.
        for _ in range(20):
            run_threads(lambda _: (eng.start("x"), eng.stop("x")), 1)
        assert eng.durations("x").size == 20


def test_reset_forgets_idle_threads_once_there_are_many():
    """Slots of threads with nothing open are dropped by reset() once more than 64 threads have
    timed, so a job that starts a thread per step does not grow the engine without bound; the
    threads that did time still have their samples, and new threads start cleanly."""
    eng = _core.TimerEngine("host")

    def once() -> None:
        eng.start("t")
        eng.stop("t")

    for _ in range(100):
        th = threading.Thread(target=once)
        th.start()
        th.join(timeout=30)
    eng.start("open")  # this thread has a timer open across the reset
    eng.reset()
    eng.stop("open")   # its slot survived
    once()
    assert eng.durations("open").size == 1 and eng.durations("t").size == 1
    eng.close()
