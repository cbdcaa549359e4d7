"""ReportIntervalTracker: pure logic with an injected clock and reduction (no process group)."""

from __future__ import annotations

import math

import pytest
from straggler.timing.interval import ReportIntervalTracker


class FakeClock:
    """Advances by the next step time each time it is read."""

    def __init__(self, steps):
        self.t = 0.0
        self.steps = list(steps)

    def __call__(self):
        now = self.t
        if self.steps:
            self.t += self.steps.pop(0)
        return now


def _run(tracker, n):
    elapsed = []
    for _ in range(n):
        tracker.iter_increase()
        if tracker.is_interval_elapsed():
            elapsed.append(tracker.current_iter)
    return elapsed


def test_no_estimate_before_sixteen_step_times():
    tracker = ReportIntervalTracker(1.0, clock=FakeClock([0.01] * 100))
    _run(tracker, 16)  # the first call only stamps the clock: 15 step times so far
    assert tracker.iter_interval is None and not tracker.is_interval_elapsed()
    tracker.iter_increase()
    assert tracker.iter_interval == 100  # 1 s / 10 ms


def test_estimate_uses_the_median_step_time():
    # NVRx's own case: 10 ms steps with the first 8 at 50 ms, 0.5 s interval -> about 50 iters.
    steps = [0.05] * 8 + [0.01] * 100
    tracker = ReportIntervalTracker(0.5, clock=FakeClock(steps))
    _run(tracker, 17)
    assert 45 <= tracker.iter_interval <= 55


def test_later_estimates_fill_the_interval_with_skewed_steps():
    # A busy host: steps of 10 and 30 ms in turn. The median (10 ms) would put 100 iterations
    # (2 s) into a 1 s interval; the mean (20 ms) puts 50.
    tracker = ReportIntervalTracker(1.0, clock=FakeClock([0.01, 0.03] * 100))
    _run(tracker, 100)
    assert tracker.local_estimate() == pytest.approx(50.0)


def test_an_outlier_step_does_not_shorten_the_interval():
    # The report's own step, a checkpoint: one 2 s step among 10 ms steps is left out.
    tracker = ReportIntervalTracker(1.0, clock=FakeClock([0.01] * 50 + [2.0] + [0.01] * 50))
    _run(tracker, 80)
    assert tracker.local_estimate() == pytest.approx(100.0)


def test_first_report_on_a_multiple_of_the_interval_then_every_interval():
    tracker = ReportIntervalTracker(0.1, clock=FakeClock([0.01] * 200))  # 10 iterations
    assert _run(tracker, 45) == [20, 30, 40]  # estimated at 17; NVRx's `iter % n == 0`


def test_agree_adopts_the_reduced_estimate_from_the_report_iteration():
    tracker = ReportIntervalTracker(0.1, clock=FakeClock([0.01] * 200))
    _run(tracker, 20)
    assert tracker.is_interval_elapsed()
    tracker.agree(25.0)  # another rank was faster: it wants 25 iterations
    assert tracker.iter_interval == 25 and tracker.next_report_iter == 45


def test_interval_is_reestimated_when_step_time_changes():
    # 10 ms steps, then 40 ms steps: a 1 s interval shrinks from 100 to 25 iterations.
    clock = FakeClock([0.01] * 80 + [0.04] * 300)
    tracker = ReportIntervalTracker(1.0, clock=clock)
    _run(tracker, 100)
    assert tracker.iter_interval == 100
    _run(tracker, 80)  # the last 64 step times are now all 40 ms
    assert tracker.local_estimate() == pytest.approx(25.0)
    tracker.agree(tracker.local_estimate())
    assert tracker.iter_interval == 25


def test_first_estimate_goes_through_the_reduction():
    seen = []

    def reduce_max(x):
        seen.append(x)
        return 40.0  # the fastest rank's estimate wins

    tracker = ReportIntervalTracker(1.0, clock=FakeClock([0.1] * 50), reduce_max=reduce_max)
    _run(tracker, 17)
    assert seen == [pytest.approx(10.0)] and tracker.iter_interval == 40


def test_minimum_interval_is_the_profiling_interval():
    tracker = ReportIntervalTracker(0.01, profiling_interval=1000, clock=FakeClock([0.01] * 50))
    _run(tracker, 17)
    assert tracker.iter_interval == 1000


def test_zero_time_interval_reports_every_profiling_interval_from_the_start():
    calls = []
    tracker = ReportIntervalTracker(0, profiling_interval=3, reduce_max=calls.append)
    elapsed = []
    for _ in range(10):
        tracker.iter_increase()
        if tracker.is_interval_elapsed():
            elapsed.append(tracker.current_iter)
            tracker.agree(tracker.local_estimate())
    assert elapsed == [3, 6, 9] and calls == []  # no collective needed


def test_a_missed_report_keeps_the_cadence():
    tracker = ReportIntervalTracker(0, profiling_interval=5)
    assert _run(tracker, 22) == [5, 10, 15, 20]  # nobody called agree(): same cadence


def test_frozen_clock_gives_a_finite_interval():
    tracker = ReportIntervalTracker(1.0, clock=lambda: 0.0)
    _run(tracker, 17)
    assert tracker.iter_interval == 2**31 - 1


def test_nan_agreement_falls_back_to_the_local_estimate():
    tracker = ReportIntervalTracker(0.1, clock=FakeClock([0.01] * 100))
    _run(tracker, 20)
    tracker.agree(math.nan)
    assert tracker.iter_interval == 10


@pytest.mark.parametrize("value", [-1, math.inf, math.nan, "60", True])
def test_bad_time_interval_is_rejected(value):
    with pytest.raises(ValueError, match="report_time_interval"):
        ReportIntervalTracker(value)


@pytest.mark.parametrize("value", [0, -2, 1.5, None])
def test_bad_profiling_interval_is_rejected(value):
    with pytest.raises(ValueError, match="profiling_interval"):
        ReportIntervalTracker(1.0, profiling_interval=value)


def test_state_dict_round_trip_keeps_the_iteration():
    tracker = ReportIntervalTracker(0, profiling_interval=2)
    _run(tracker, 7)
    other = ReportIntervalTracker(0, profiling_interval=2)
    other.load_state_dict(tracker.state_dict())
    assert other.current_iter == 7


def test_elapsed_stays_true_for_the_rest_of_the_report_iteration():
    tracker = ReportIntervalTracker(0, profiling_interval=2)
    _run(tracker, 2)
    assert tracker.is_interval_elapsed()
    tracker.agree(2.0)  # the report re-agrees the interval; callers may still ask
    assert tracker.is_interval_elapsed() and tracker.next_report_iter == 4
    tracker.iter_increase()
    assert not tracker.is_interval_elapsed()


def test_bring_forward_makes_an_earlier_iteration_due_never_a_later_one():
    tracker = ReportIntervalTracker(0, profiling_interval=10)
    tracker.bring_forward(4)
    assert _run(tracker, 4) == [4]
    tracker.agree(10.0)  # next at 14
    tracker.bring_forward(40)
    assert tracker.next_report_iter == 14


def test_adopting_the_agreed_iteration_keeps_the_cadence_on_every_rank():
    ahead, fresh = ReportIntervalTracker(0, profiling_interval=3), \
        ReportIntervalTracker(0, profiling_interval=3)
    ahead.load_state_dict({"current_iter": 100})
    for tracker in (ahead, fresh):
        tracker.adopt_iteration(100)
    assert _run(ahead, 6) == _run(fresh, 6) == [102, 105]


def test_loading_after_counting_started_keeps_the_agreed_count():
    tracker = ReportIntervalTracker(0, profiling_interval=2)
    _run(tracker, 3)
    tracker.load_state_dict({"current_iter": 50})
    assert tracker.current_iter == 3
