"""TimerEngine statistics: computed in C++, equal to numpy's on the same samples."""

from __future__ import annotations

import numpy as np
import pytest

from straggler import _core

COLUMNS = ("MIN", "MAX", "MED", "AVG", "STD", "NUM", "TOTAL")


def numpy_row(x: np.ndarray) -> list[float]:
    return [x.min(), x.max(), np.median(x), x.mean(), x.std(), x.size, x.sum()]


def test_summary_columns_are_exported():
    assert _core.SUMMARY_COLUMNS == COLUMNS


@pytest.mark.parametrize("n", [1, 2, 301, 300])  # odd and even counts: the median differs
def test_statistics_equal_numpy_on_simulated_durations(sim_cuda, n):
    rng = np.random.default_rng(n)
    work = rng.uniform(0.01, 1.0, size=n)
    with _core.TimerEngine("cuda") as eng:
        sim_cuda.enqueue(0, 500.0)  # queue first: each pair then measures exactly its work
        for ms in work:
            eng.start("k")
            sim_cuda.enqueue(0, float(ms))
            eng.stop("k")
        names, table = eng.summaries()  # harvests only what finished: nothing yet
        assert names == []
        eng.flush()
        names, table = eng.summaries()
        samples = eng.durations("k")
    assert names == ["k"]
    assert table.dtype == np.float64 and table.shape == (1, 7)
    np.testing.assert_allclose(samples, work, rtol=0, atol=1e-3)
    # Same data, same answer; only summation order differs (numpy sums pairwise).
    np.testing.assert_allclose(table[0], numpy_row(samples), rtol=1e-12, atol=1e-12)


def test_statistics_per_timer_on_host_durations():
    with _core.TimerEngine("host") as eng:
        for i in range(50):
            for name in ("a", "b", "c"):
                eng.start(name)
                sum(range(100 * (i % 7)))  # some uneven work
                eng.stop(name)
        eng.timer_id("never")  # no samples: no row
        names, table = eng.summaries()
        assert names == ["a", "b", "c"]
        for row, name in zip(table, names):
            np.testing.assert_allclose(row, numpy_row(eng.durations(name)), rtol=1e-12)


def test_statistics_cover_the_ring_buffer_only(sim_cuda):
    with _core.TimerEngine("cuda", capacity=5) as eng:
        sim_cuda.enqueue(0, 300.0)
        for ms in (9.0, 1.0, 2.0, 3.0, 4.0, 5.0):  # the first sample is pushed out
            eng.start("r")
            sim_cuda.enqueue(0, ms)
            eng.stop("r")
        eng.flush()
        _, table = eng.summaries()
    np.testing.assert_allclose(table[0], [1.0, 5.0, 3.0, 3.0, np.sqrt(2.0), 5, 15.0], atol=1e-3)


def test_reset_empties_the_summaries():
    with _core.TimerEngine("host") as eng:
        eng.start("a")
        eng.stop("a")
        assert eng.summaries()[0] == ["a"]
        eng.reset()
        names, table = eng.summaries()
        assert names == [] and table.shape == (0, 7)
        eng.start("a")
        eng.stop("a")
        assert eng.summaries()[1][0, COLUMNS.index("NUM")] == 1
