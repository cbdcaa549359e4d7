"""TimerEngine's host-clock backend: same interface, no driver involved."""

from __future__ import annotations

import time

import numpy as np
from straggler import _core


def test_host_backend_measures_wall_time():
    with _core.TimerEngine("host") as eng:
        assert eng.backend == "host"
        eng.start("sleep")
        time.sleep(0.03)
        eng.stop("sleep")
        (d,) = eng.durations("sleep")
    # sleep() never returns early; a loaded machine can make it much longer.
    assert 30.0 <= d < 30.0 + 1000.0


def test_host_pairs_are_stored_at_stop_and_never_pending():
    with _core.TimerEngine("host") as eng:
        t = eng.timer_id("x")
        for _ in range(10):
            eng.start(t, 12345)  # the stream is ignored
            eng.stop(t, 12345)
        assert eng.pending() == 0
        assert eng.harvest() == 0
        eng.flush()
        assert eng.durations(t).size == 10
        assert np.all(eng.durations(t) >= 0.0)


def test_timer_ids_are_stable_small_ints_shared_by_names():
    with _core.TimerEngine("host") as eng:
        ids = [eng.timer_id(n) for n in ("a", "b", "a", "c", "b")]
        assert ids == [0, 1, 0, 2, 1]
        assert eng.timer_name(2) == "c"
        eng.start(1)
        eng.stop("b")  # an id and its name are the same timer
        assert eng.durations("b").size == 1
        eng.start("ünïcode ⏱")
        eng.stop("ünïcode ⏱")
        assert eng.summaries()[0] == ["b", "ünïcode ⏱"]


def test_host_ring_buffer_is_bounded():
    with _core.TimerEngine("host", capacity=3) as eng:
        assert eng.capacity == 3
        for _ in range(10):
            eng.start("a")
            eng.stop("a")
        assert eng.durations("a").size == 3


def test_host_engine_works_without_any_driver():
    # The host backend never touches the driver; nothing here may load it.
    with _core.TimerEngine(backend="host", capacity=1, device=0) as eng:
        eng.start("a")
        eng.stop("a")
        assert eng.summaries()[1].shape == (1, 7)
