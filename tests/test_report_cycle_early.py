"""The early report's window: a fraction of the interval, never too few steps to judge."""

from __future__ import annotations

from straggler.analysis import persistence
from straggler.report_cycle import EARLY_FRACTION, MAX_EARLY_REPORTS, MIN_EARLY_STEPS, early_window


def test_an_early_window_is_a_fraction_of_a_long_interval():
    every = 10 * MIN_EARLY_STEPS
    assert early_window(every) == round(EARLY_FRACTION * every)


def test_an_early_window_holds_at_least_the_minimum_steps():
    assert early_window(3 * MIN_EARLY_STEPS) == MIN_EARLY_STEPS
    assert early_window(4000, profiling_interval=1000) == 1000  # a profiled entry at least


def test_no_early_report_when_the_minimum_is_over_half_the_interval():
    # The demo's 2 s reports of ~35 steps: an early window would judge ~5 steps.
    assert early_window(2 * MIN_EARLY_STEPS - 1) is None
    assert early_window(35) is None
    assert early_window(None) is None


def test_the_policy_tells_every_early_window_from_a_full_one():
    # The policy reads which windows are early from their steps (early_confirm_span): at most
    # half the interval, and no more in a row than early reports may come.
    assert persistence._EARLY_STREAK > MAX_EARLY_REPORTS
    assert persistence._EARLY_WINDOW > 0.5 > EARLY_FRACTION
    assert 2 * early_window(3 * MIN_EARLY_STEPS) <= 3 * MIN_EARLY_STEPS
