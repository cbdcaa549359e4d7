"""TimerEngine statistics: computed in C++, equal to numpy's on the same samples."""

from __future__ import annotations

import numpy as np
import pytest
from straggler import _core

COLUMNS = ("MIN", "MAX", "MED", "AVG", "STD", "NUM", "TOTAL")


def numpy_row(x: np.ndarray) -> list[float]:
    std = x.std(ddof=1) if x.size > 1 else np.nan  # sample std, as NVRx and the sections
    return [x.min(), x.max(), np.median(x), x.mean(), std, x.size, x.sum()]


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
        for row, name in zip(table, names, strict=True):
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
    np.testing.assert_allclose(table[0], [1.0, 5.0, 3.0, 3.0, np.sqrt(2.5), 5, 15.0], atol=1e-3)


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


@pytest.mark.parametrize("n", [1, 2, 7, 50])
def test_std_is_the_sample_std_for_sections_and_gpu_timers_alike(n):
    """`Statistic.STD` means one thing: sections (Python) and engine timers (C++) agree."""
    from collections import deque
    from types import SimpleNamespace

    from straggler import Statistic
    from straggler.detector import DetectorCore

    with _core.TimerEngine("host") as eng:
        for i in range(n):
            eng.start("k")
            sum(range(200 * (i % 5 + 1)))  # uneven work: a spread to measure
            eng.stop("k")
        samples = eng.durations("k")
        (row,) = eng.summaries()[1]
    # The detector's section statistics, computed by its own code on the same samples (sections
    # keep theirs in ns).
    ns = deque((samples * 1e6).tolist())
    owner = SimpleNamespace(sections={"k": SimpleNamespace(samples=ns)})
    section_std = DetectorCore.section_summaries(owner)["k"][Statistic.STD]
    engine_std = row[COLUMNS.index("STD")]
    if n == 1:
        assert np.isnan(section_std) and np.isnan(engine_std)
    else:
        assert engine_std == pytest.approx(section_std, rel=1e-12)
        assert engine_std == pytest.approx(np.std(samples, ddof=1), rel=1e-12)
