"""Early reports' short windows do not raise the bar later reports are judged by."""

from __future__ import annotations

import numpy as np
from straggler.analysis.policy import PolicyConfig, StragglerPolicy


def _feed(policy, rng, steps, noise, slow=1.0):
    times = 100.0 * np.exp(noise * rng.standard_normal(3))
    times[2] *= slow
    return policy.update([0, 1, 2], {"s": times}, steps={"s": steps})


def _healthy(policy, rng, reports, steps, noise):
    """`reports` windows of `steps` steps where no rank is slow: none confirms anyone."""
    for _ in range(reports):
        assert not _feed(policy, rng, steps, noise).confirmed


def _confirmations(policy, rng, reports, steps, slow):
    """`reports` windows with rank 2 `slow` times slower (1 % noise): which confirmed it."""
    return [bool(_feed(policy, rng, steps, 0.01, slow=slow).confirmed) for _ in range(reports)]


def test_short_windows_do_not_inflate_the_noise_between_reports():
    # Full windows (300 steps) with 1 % noise; then, as after every suspect, bursts of four
    # early windows (40 steps) whose medians are far noisier; then rank 2 is 10 % slower. The
    # early windows are judged with a wider bar, but the full windows keep theirs: the
    # straggler is confirmed within 3 full reports of its onset.
    rng, policy = np.random.default_rng(3), StragglerPolicy()
    for _ in range(3):
        _healthy(policy, rng, 4, 300, 0.01)
        _healthy(policy, rng, 4, 40, 0.08)
    confirmed = _confirmations(policy, rng, 3, 300, slow=1.1)
    assert any(confirmed), confirmed


def test_windows_that_stay_short_become_the_typical_length():
    # Steps got slower for good: every window now holds 40 steps. After a few of them the
    # noise is learned from them again, and a 20 % straggler is confirmed.
    rng, policy = np.random.default_rng(4), StragglerPolicy()
    _healthy(policy, rng, 6, 300, 0.01)
    _healthy(policy, rng, 12, 40, 0.01)
    confirmed = _confirmations(policy, rng, 4, 40, slow=1.2)
    assert any(confirmed), confirmed


def test_early_windows_never_clear_a_straggler_that_is_still_slow():
    # Rank 2 is 10 % slower from a full window on; early windows (200 steps, a seventh of the
    # interval) follow. Their wide noise once counted as health: the rank was cleared while
    # still slow (in 48 of 200 runs), even in the report that confirmed it.
    cleared = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        policy = StragglerPolicy()
        for n, slow in [(1500, 1.0)] * 5 + [(1500, 1.1)] + [(200, 1.1)] * 4:
            times = 100.0 * np.exp(0.02 * rng.standard_normal(3) * np.sqrt(1500 / n))
            times[2] *= slow
            se = np.full(3, 1.25 * np.log(1.1 / 0.9) / 1.349 / np.sqrt(n))
            decision = policy.update([0, 1, 2], {"section:f": times}, steps={"section:f": n},
                                     spread={"section:f": se}, low={"section:f": 0.8 * times})
            cleared += 2 in decision.cleared
    assert cleared == 0


def _windows(policy, rng, plan):
    """Feed (steps, rank 2's slowdown) windows with their within-window evidence (1 % noise
    between reports, fast steps as slow as the median); the confirmed set after each."""
    out = []
    for n, slow in plan:
        times = 100.0 * np.exp(0.01 * rng.standard_normal(3))
        times[2] *= slow
        se = np.full(3, 1.25 * np.log(1.1 / 0.9) / 1.349 / np.sqrt(n))
        out.append(policy.update([0, 1, 2], {"section:f": times}, steps={"section:f": n},
                                 spread={"section:f": se},
                                 low={"section:f": 0.8 * times}).confirmed)
    return out


def test_early_windows_alone_never_confirm_but_finish_what_a_full_window_began():
    # A healthy rank slow for two early windows only (the replayed idle 4-rank trace: 3 s of a
    # 5 s interval) is no straggler; a rank a full window saw slow is confirmed by the early
    # windows that follow it.
    healthy = [(300, 1.0)] * 6
    burst = _windows(StragglerPolicy(), np.random.default_rng(5),
                     healthy + [(50, 1.0)] + [(50, 1.25)] * 3 + [(300, 1.0)] * 2)
    assert not any(burst), burst
    before = _windows(StragglerPolicy(PolicyConfig(early_confirm_span=0.0)),
                      np.random.default_rng(5), healthy + [(50, 1.0)] + [(50, 1.25)] * 3)
    assert any(before), before  # what the rule changes
    onset = _windows(StragglerPolicy(), np.random.default_rng(5),
                     healthy + [(300, 1.25)] + [(50, 1.25)] * 2)
    assert onset[-1] == {2}, onset


def test_windows_that_stay_short_are_full_windows_again():
    # The interval's steps got fewer for good (every window 50 steps after 300): more of them
    # in a row than early reports may come are full windows, and confirm.
    got = _windows(StragglerPolicy(), np.random.default_rng(6),
                   [(300, 1.0)] * 6 + [(50, 1.0)] * 6 + [(50, 1.25)] * 4)
    assert got[-1] == {2}, got

