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


@pytest.mark.parametrize(("name", "phase", "rank", "setting"), [
    # A full window (its upper quartile +18 %) and two early ones (+26 %, +17 %): 5.5 s.
    ("idle-3r", 0.0, 2, "early_finish_min_s"),
    # A full window (data +9 %, fast steps +19 %) and an early one, on evidence left from a
    # burst 20 s before: 4.4 s.
    ("idle-4r[0,1,2]", 0.0, 2, "early_finish_min_s"),
    # Two early windows of 50 steps (optimizer +17-20 %), 3.5 s: 1.0 of a 3 s interval.
    ("idle-4r", 0.0, 0, "early_confirm_min_s"),
])
def test_a_healthy_ranks_burst_of_a_few_seconds_is_not_confirmed(name, phase, rank, setting):
    trace = _run(name)
    assert set(_confirmed(trace, trace.times_ms, phase, **{setting: 0.0})) == {rank}
    assert _confirmed(trace, trace.times_ms, phase) == {}


@pytest.mark.parametrize("kind", ["compute", "data"])
def test_a_straggler_is_still_confirmed_with_early_reports_at_3_s(kind):
    # Rank 2 of the idle 3-rank trace (100-290 steps per window) 20 % slower from 40 s: named
    # by the onset's window, confirmed once its run of slow windows has lasted 5 s (6.2 s after
    # the onset; 4.7-5.5 s without the minimum).
    trace = TRACES["idle-3r"]
    onset_s = 40.0
    bounds = [(int(np.searchsorted(trace.end_s, onset_s)), trace.steps)]
    slowed = replay.inject(trace, bounds, replay.Injection(2, 1.2, kind, onset=0))
    got = _confirmed(trace, slowed, 0.0)
    assert set(got) == {2}, got
    assert got[2] - onset_s <= 2.5 * INTERVAL_S, got


@pytest.mark.parametrize(("full", "early", "without", "with_it"), [(800, 120, 1, 1),
                                                              (150, 50, 1, 2)])
def test_the_minimum_holds_back_chains_of_short_windows_only(full, early, without, with_it):
    # 3 s per report, rank 2 20 % slower from a full window on, then early windows (the
    # report after the onset's is the first early one). Live-sized windows (470-1,260 steps,
    # early ones 60-150) confirm as without the minimum; windows of the replayed traces' size
    # wait until the chain has lasted 5 s (early_finish_min_s: 1 + 2 * 50 / 150 intervals).
    plan = [(full, 1.0)] * 6 + [(full, 1.2)] + [(early, 1.2)] * 4
    for config, first in ((PolicyConfig(early_finish_min_s=0.0), without),
                          (PolicyConfig(), with_it)):
        got = _windows(StragglerPolicy(config, interval_s=INTERVAL_S),
                       np.random.default_rng(7), plan)
        assert not any(got[:7 + first - 1]) and got[7 + first - 1] == {2}, (config, got)
