"""Early windows finish only what the latest full window began, or an unbroken run of their own
(`PolicyConfig.early_confirm_run`): the recorded traces replayed with the early cadence of
straggler/report_cycle.py (`schedule_verdicts` in benchmarks/replay.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import replay
from straggler.analysis.policy import PolicyConfig, StragglerPolicy

IDLE_4R = replay.load_trace(replay.TRACE_DIR / "idle-4r.npz")


def _confirmed(trace, times_ms, interval_s, phase_s, **config):
    """Every rank confirmed in a replay with early reports, and when (end s of the report)."""
    got = replay.schedule_verdicts(trace, times_ms, interval_s, True, phase_s,
                                   lambda: StragglerPolicy(PolicyConfig(**config)))
    return {r: t for t, confirmed, _ in reversed(got) for r in confirmed}


def test_a_healthy_ranks_burst_is_not_confirmed_on_evidence_left_from_long_before():
    # Ranks 1-3 of the idle 4-rank trace at 10 s per report: the recording's rank 2 (the
    # subset's second) loads its data 6-25 % slower, its fast steps 10-19 %, from 31 to 38 s
    # (nothing injected). Its evidence kept 1.0 of the 6 from the warm-up's windows (2-32 s),
    # and with it their word "a full window added"; early windows inside the burst confirmed
    # it at 36 s. Now the last full window, which added nothing, withdrew that word, and the
    # early windows' own run spans less than early_confirm_span (0.75 of an interval).
    trace = replay.subset(IDLE_4R, (1, 2, 3))
    before = _confirmed(trace, trace.times_ms, 10.0, 2.0, early_confirm_run=False)
    assert set(before) == {1}, before
    assert _confirmed(trace, trace.times_ms, 10.0, 2.0) == {}


def test_a_straggler_that_starts_mid_run_is_confirmed_as_before():
    # The same ranks, rank 2 of the subset 20 % slower in its compute from 36 s or 45 s, 5 s
    # per report: the onset's window names it and its early windows finish the verdict, at
    # the same report with the rule as without it, within 1.5 intervals.
    trace = replay.subset(IDLE_4R, (1, 2, 3))
    for onset_s in (36.0, 45.0):
        bounds = [(int(np.searchsorted(trace.end_s, onset_s)), trace.steps)]
        slowed = replay.inject(trace, bounds, replay.Injection(2, 1.2, "compute", onset=0))
        got = _confirmed(trace, slowed, 5.0, 0.0)
        assert got == _confirmed(trace, slowed, 5.0, 0.0, early_confirm_run=False)
        assert set(got) == {2} and got[2] - onset_s <= 1.5 * 5.0, (onset_s, got)
