"""Early reports at a short interval (3 s): healthy ranks' bursts of a few seconds are not
confirmed (`PolicyConfig.early_confirm_min_s`, `PolicyConfig.early_finish_min_s`), a straggler
still is. The recorded traces replayed with the early cadence of straggler/report_cycle.py
(`schedule_verdicts` in benchmarks/replay.py; docs/policy.md, "Short report intervals")."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import replay
from straggler.analysis.policy import PolicyConfig, StragglerPolicy
from test_policy_early_windows import _windows

TRACES = {t.name: t for t in replay.traces()}
INTERVAL_S = 3.0


def _run(name):
    trace = TRACES[name.split("[")[0]]
    if "[" in name:
        trace = replay.subset(trace, [int(r) for r in name.split("[")[1].rstrip("]").split(",")])
    return trace


def _confirmed(trace, times_ms, phase, **config):
    """Every rank confirmed in a replay with early reports at 3 s, and when (end s)."""
    got = replay.schedule_verdicts(trace, times_ms, INTERVAL_S, True, phase * INTERVAL_S,
                                   lambda: StragglerPolicy(PolicyConfig(**config)))
    return {r: t for t, confirmed, _ in reversed(got) for r in confirmed}


@pytest.mark.parametrize(("name", "phase", "rank", "settings"), [
    # A full window (its upper quartile +18 %) and two early ones (+26 %, +17 %): 5.5 s. An
    # early window confirms no upper quartile either (`tail_full_window`).
    ("idle-3r", 0.0, 2, {"early_finish_min_s": 0.0, "tail_full_window": False}),
    # A full window (data +9 %, fast steps +19 %) and an early one, on evidence left from a
    # burst 20 s before: 4.4 s.
    ("idle-4r[0,1,2]", 0.0, 2, {"early_finish_min_s": 0.0}),
    # Two early windows of 50 steps (optimizer +17-20 %), 3.5 s: 1.0 of a 3 s interval.
    ("idle-4r", 0.0, 0, {"early_confirm_min_s": 0.0}),
])
def test_a_healthy_ranks_burst_of_a_few_seconds_is_not_confirmed(name, phase, rank, settings):
    trace = _run(name)
    assert set(_confirmed(trace, trace.times_ms, phase, **settings)) == {rank}
    assert _confirmed(trace, trace.times_ms, phase) == {}


def test_a_healthy_ranks_burst_of_6_s_with_early_windows_is_not_confirmed():
    # Rank 1's data loading 8-17 % slower, fast steps too, for 6.1 s: a full window of 111
    # steps (3.0 s) and two early ones of 50 (1.3 s, 1.8 s). Read from their steps the early
    # windows looked full (the interval's steps learned as 74-87 from the run's first windows
    # of 51-86 steps; its windows hold 95-122): min_slow_s counted three windows, 9 s. Told
    # which windows are early, the chain lasts 2.0 intervals, under early_finish_min_s (6.5 s).
    trace = _run("idle-4r[1,2,3]")
    assert _confirmed(trace, trace.times_ms, 0.8, early_from_steps=True,
                      early_finish_min_s=5.0) == pytest.approx({1: 38.4}, abs=0.1)
    # Either change alone leaves it: the flag with 5 s, or 6.5 s read from the steps.
    assert set(_confirmed(trace, trace.times_ms, 0.8, early_finish_min_s=5.0)) == {1}
    assert set(_confirmed(trace, trace.times_ms, 0.8, early_from_steps=True)) == {1}
    assert _confirmed(trace, trace.times_ms, 0.8) == {}


@pytest.mark.parametrize("kind", ["compute", "data"])
def test_a_straggler_is_still_confirmed_with_early_reports_at_3_s(kind):
    # Rank 2 of the idle 3-rank trace (100-290 steps per window) 20 % slower from 40 s: named
    # by the onset's window, confirmed once its run of slow windows has lasted 6.5 s (5.5 s
    # after the onset, as without the minimum; 6.2 s when the early windows were read from
    # their steps, with 5 s).
    trace = TRACES["idle-3r"]
    onset_s = 40.0
    bounds = [(int(np.searchsorted(trace.end_s, onset_s)), trace.steps)]
    slowed = replay.inject(trace, bounds, replay.Injection(2, 1.2, kind, onset=0))
    got = _confirmed(trace, slowed, 0.0)
    assert set(got) == {2}, got
    assert got[2] - onset_s <= 2.5 * INTERVAL_S, got


@pytest.mark.parametrize(("full", "early", "without", "with_it"), [(800, 120, 1, 1),
                                                              (150, 50, 1, 4)])
def test_the_minimum_holds_back_chains_of_short_windows_only(full, early, without, with_it):
    # 3 s per report, rank 2 20 % slower from a full window on, then early windows (the
    # report after the onset's is the first early one). Live-sized windows (470-1,260 steps,
    # early ones 60-150) confirm as without the minimum; windows of the replayed traces' size
    # wait until the chain has lasted 6.5 s (early_finish_min_s: 1 + 4 * 50 / 150 intervals;
    # 5 s before, the second early window: 1 + 2 * 50 / 150).
    plan = [(full, 1.0)] * 6 + [(full, 1.2)] + [(early, 1.2)] * 4
    for config, first in ((PolicyConfig(early_finish_min_s=0.0), without),
                          (PolicyConfig(), with_it)):
        got = _windows(StragglerPolicy(config, interval_s=INTERVAL_S),
                       np.random.default_rng(7), plan)
        assert not any(got[:7 + first - 1]) and got[7 + first - 1] == {2}, (config, got)


def test_a_healthy_ranks_tail_burst_is_not_confirmed_by_early_windows():
    # 10 s per report, loaded-4r: rank 2's forward upper quartile +25 % through a full window
    # of 291 steps, then +107 % and +148 % through two early windows of 50 (its fast steps
    # +1 %), 13 s. The early windows brought its tail evidence to the threshold; only a full
    # window confirms an upper quartile now (`tail_full_window`), and the next one is healthy.
    trace = TRACES["loaded-4r"]

    def confirmed(**config):
        got = replay.schedule_verdicts(trace, trace.times_ms, 10.0, True, 8.0,
                                       lambda: StragglerPolicy(PolicyConfig(**config)))
        return {r: t for t, c, _ in reversed(got) for r in c}

    assert confirmed(tail_full_window=False) == pytest.approx({2: 98.0}, abs=0.1)
    assert confirmed() == {}
