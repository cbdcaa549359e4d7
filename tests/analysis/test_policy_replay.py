"""The policy on recorded real runs: gloo traces (tests/data/traces) replayed through the real
report path (benchmarks/replay.py: host_summaries, one ReportGenerator per rank, apply_policy)
with stragglers injected, against the targets of docs/policy.md."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import replay
from straggler.analysis.policy import PolicyConfig, StragglerPolicy

# 5 s of the recorded runs per report: 120-300 steps per window, as a report of a real job
# summarises hundreds of steps.
INTERVAL_S = 5.0
TRACES = replay.traces()


def _replay(trace, inj):
    bounds = replay.window_bounds(trace, INTERVAL_S)
    reps = replay.reports(trace, replay.inject(trace, bounds, inj), bounds)
    confirmed, suspects = replay.run_policy(reps, StragglerPolicy)
    return replay.score("", trace, confirmed, suspects, inj, INTERVAL_S)


def test_the_recorded_traces_are_real_runs_of_several_ranks_idle_and_loaded():
    assert {t.name for t in TRACES} >= {"idle-3r", "idle-4r", "loaded-3r", "loaded-4r"}
    for t in TRACES:
        assert t.meta["backend"] == "gloo" and t.world >= 3 and t.steps >= 2000
        assert t.meta["busy_processes"] == (t.meta["cpu_count"] if t.name.startswith("loaded")
                                            else 0)


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_a_clean_replay_confirms_nobody(trace):
    out = _replay(trace, None)
    assert out.judged_reports >= 15
    assert out.false_alarms == 0, out.confirmed


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_a_20_percent_compute_straggler_is_confirmed_within_3_reports_and_cleared(trace):
    n = len(replay.window_bounds(trace, INTERVAL_S))
    onset = replay.onset_of(n)
    inj = replay.Injection(2, 1.2, "compute", "recovers", onset, onset + 6)
    out = _replay(trace, inj)
    assert out.reports_to_confirm is not None and out.reports_to_confirm <= 3, out.confirmed
    assert out.reports_to_clear is not None and out.reports_to_clear <= 3, out.confirmed
    assert out.false_alarms == 0, out.confirmed
    # Before it is confirmed it is a suspect: the report that may come early.
    first = onset + out.reports_to_confirm - 1
    assert any(2 in s for s in out.suspects[onset:first]) or out.reports_to_confirm == 1


@pytest.mark.parametrize("kind", ["data", "stall"])
def test_a_20_percent_data_or_host_stall_straggler_is_confirmed_within_3_reports(kind):
    trace = next(t for t in TRACES if t.name == "loaded-4r")
    n = len(replay.window_bounds(trace, INTERVAL_S))
    out = _replay(trace, replay.Injection(2, 1.2, kind, "persistent", replay.onset_of(n)))
    assert out.reports_to_confirm is not None and out.reports_to_confirm <= 3, out.confirmed
    assert out.false_alarms == 0, out.confirmed


# ------------------------------------------------------- the within-window evidence (#19)
# Every trace and each 3-rank subset of a 4-rank trace (12 runs of real noise), through
# replay.direct_verdicts: the same numbers as the report path (checked below), fast enough for
# many reports.
RUNS = [v for t in TRACES for v in replay.variants(t)]


def _direct(trace, inj, phase=0.0, config=None):
    bounds = replay.window_bounds(trace, INTERVAL_S, phase)
    confirmed, suspects = replay.direct_verdicts(trace, replay.inject(trace, bounds, inj),
                                                 bounds, lambda: StragglerPolicy(config))
    return replay.score("", trace, confirmed, suspects, inj, INTERVAL_S)


def test_the_direct_replay_gives_the_report_paths_verdicts():
    trace = next(t for t in TRACES if t.name == "idle-4r")
    n = len(replay.window_bounds(trace, INTERVAL_S))
    inj = replay.Injection(1, 1.1, "compute", "recovers", replay.onset_of(n), n - 5)
    via_reports, direct = _replay(trace, inj), _direct(trace, inj)
    assert via_reports.confirmed == direct.confirmed and via_reports.suspects == direct.suspects
    assert direct.reports_to_confirm is not None


def _direct_at(trace, inj, interval_s, phase=0.0, config=None):
    # The default policy, its upper quartiles (the tail test) included, knowing the report
    # interval as the detector's does.
    bounds = replay.window_bounds(trace, interval_s, phase)
    confirmed, suspects = replay.direct_verdicts(
        trace, replay.inject(trace, bounds, inj), bounds,
        lambda: StragglerPolicy(config, interval_s=interval_s))
    return replay.score("", trace, confirmed, suspects, inj, interval_s)


def test_leaving_the_upper_quartiles_out_gives_the_same_verdicts_when_they_are_off():
    trace = next(t for t in TRACES if t.name == "idle-4r")
    n = len(replay.window_bounds(trace, 3.0))
    inj = replay.Injection(1, 1.1, "stall", "recovers", replay.onset_of(n), n - 5)
    bounds = replay.window_bounds(trace, 3.0)
    times = replay.inject(trace, bounds, inj)

    def off():
        return StragglerPolicy(PolicyConfig(tail_min_effect=10.0))

    with_tails = replay.direct_verdicts(trace, times, bounds, off)
    assert replay.direct_verdicts(trace, times, bounds, off, tails=False) == with_tails
    assert any(with_tails[0]) and any(with_tails[1])  # confirmed and suspects to compare


@pytest.mark.parametrize(("interval_s", "most"), [(5.0, 0), (3.0, 0)])
def test_clean_replays_confirm_nobody_in_a_thousand_reports(interval_s, most):
    # Measured (benchmarks/README.md, "Fault injection"): none in 1,162 reports of 5 s, none in
    # 1,972 of 3 s (26-160 steps per window; 3 before `min_slow_s`, each a healthy rank slow
    # for two whole 3 s windows; 14 before the fast steps).
    reports, alarms = 0, []
    for trace in RUNS:
        for phase in (0.0, 0.2, 0.4, 0.6, 0.8):
            out = _direct_at(trace, None, interval_s, phase * interval_s)
            alarms += [(trace.name, phase, out.confirmed)] * out.false_alarms
            reports += out.judged_reports
    assert reports >= 1000
    assert len(alarms) <= most, alarms


def test_a_10_percent_straggler_is_confirmed_within_3_reports_and_cleared_within_3():
    # The target of #19: >= 0.95 of the replayed runs (3 kinds x 12 runs x 2 window phases);
    # measured 0.96, the misses all on the loaded 4-rank trace (59-124 steps per window);
    # cleared within 3 reports of the recovery in 71 of 72 (the previous default too).
    found, cleared = [], []
    for trace in RUNS:
        n = len(replay.window_bounds(trace, INTERVAL_S))
        onset = replay.onset_of(n)
        for phase in (0.0, INTERVAL_S / 2):
            for kind in replay.KINDS:
                inj = replay.Injection(2, 1.1, kind, "recovers", onset, min(onset + 8, n - 4))
                out = _direct_at(trace, inj, INTERVAL_S, phase)
                assert out.false_alarms == 0 and out.reports_to_confirm is not None, trace.name
                found.append(out.reports_to_confirm)
                cleared.append(out.reports_to_clear)
    assert sum(r <= 3 for r in found) >= 0.95 * len(found) and max(found) <= 4, found
    assert sum(c is not None and c <= 3 for c in cleared) >= len(cleared) - 1, cleared


def test_a_healthy_ranks_burst_of_two_short_windows_is_not_confirmed():
    # The idle 4-rank trace, 3 s per report: rank 0's optimizer (its fast steps too) 7-11 %
    # behind its peers' in two whole windows (36-42 s, 87-99 steps), then back: a 10 %
    # straggler's first 6 s. Confirmed at the 14th report before `min_slow_s`; a straggler
    # is confirmed once its slow windows span 6.5 s, which two 5 s windows do.
    trace = next(t for t in TRACES if t.name == "idle-4r")
    assert _direct_at(trace, None, 3.0, config=PolicyConfig(min_slow_s=0.0)).confirmed[13] \
        == {0}
    assert _direct_at(trace, None, 3.0).false_alarms == 0
    for interval_s, reports in ((3.0, 3), (5.0, 2)):  # rank 2 20 % slower: 9 s, 10 s
        n = len(replay.window_bounds(trace, interval_s))
        inj = replay.Injection(2, 1.2, "compute", "persistent", replay.onset_of(n))
        assert _direct_at(trace, inj, interval_s).reports_to_confirm <= reports


def test_a_20_percent_straggler_is_confirmed_within_2_reports():
    found = []
    for trace in RUNS:
        n = len(replay.window_bounds(trace, INTERVAL_S))
        for kind in replay.KINDS:
            out = _direct_at(trace, replay.Injection(2, 1.2, kind, "persistent",
                                                     replay.onset_of(n)), INTERVAL_S)
            assert out.false_alarms == 0, trace.name
            found.append(out.reports_to_confirm)
    assert all(r is not None and r <= 2 for r in found), found


def test_an_intermittent_straggler_is_confirmed_by_the_default_within_4_reports():
    # One step in five 3x slower (compute, data or a host stall) from a third into the run:
    # only the upper quartile shows it. The target of #19: >= 0.9 of the 72 replayed runs
    # within 4 reports (measured 0.96, within 3: 0.86; upper quartiles off: never).
    found = []
    for trace in RUNS:
        n = len(replay.window_bounds(trace, INTERVAL_S))
        for phase in (0.0, INTERVAL_S / 2):
            for kind in replay.KINDS:
                inj = replay.Injection(2, 3.0, kind, "intermittent", replay.onset_of(n))
                out = _direct_at(trace, inj, INTERVAL_S, phase)
                assert out.false_alarms == 0, (trace.name, out.confirmed)
                found.append(out.reports_to_confirm)
    assert all(r is not None for r in found), found
    assert sum(r <= 4 for r in found) >= 0.9 * len(found), found


@pytest.mark.parametrize("kind", ["compute", "stall", "data"])
def test_a_10_percent_straggler_starting_mid_window_is_confirmed_within_1_5_intervals(kind):
    # Issue #19's time to a verdict, for an onset inside a report window (docs/policy.md, "Early
    # reports"): the recent part of the onset's window names the suspect in that window's report
    # and the early reports confirm it. The whole window alone names it only in the next one:
    # 1.5-2.2 intervals at these phases (benchmarks/README.md, "Report schedule"). Slower data
    # loading: its evidence reaches the threshold in an early window that adds to it without
    # being slow on its own (z under slow_z); when only such a slow window confirmed
    # (`confirm_slow_only`), the early reports ran out first: 1.6-2.0 intervals, now 0.6-1.0.
    trace = next(t for t in TRACES if t.name == "idle-3r")  # 190-570 steps per window
    took = []
    for onset in (6.3, 6.5, 6.7):  # intervals into the run; the windows end at about 1, 2, ...
        onset_s = onset * INTERVAL_S
        bounds = [(int(np.searchsorted(trace.end_s, onset_s)), trace.steps)]
        inj = replay.Injection(2, 1.1, kind, onset=0)
        got = replay.schedule_verdicts(trace, replay.inject(trace, bounds, inj), INTERVAL_S)
        assert not any(c for t, c, _ in got if t < onset_s)
        hit = next(t for t, c, _ in got if t >= onset_s and c == {2})
        took.append((hit - onset_s) / INTERVAL_S)
    assert max(took) <= 1.5, took


def test_a_healthy_ranks_burst_seen_only_by_early_windows_is_not_confirmed():
    # The idle 4-rank trace's rank 1 loads its data 22-25 % slower for about 3 s near the end
    # (a healthy rank: nothing was injected). With the windows 1 s later, two early reports of
    # 50 steps fall inside that burst and confirmed it; no full window saw it slow.
    trace = replay.subset(next(t for t in TRACES if t.name == "idle-4r"), (0, 1, 2))
    got = replay.schedule_verdicts(trace, trace.times_ms, INTERVAL_S, True, 1.0)
    assert sum(early for *_, early in got) >= 10  # the early reports of other suspects
    assert not any(c for _, c, _ in got), [(t, c) for t, c, _ in got if c]


def _few_step_verdicts(trace, times, steps, most=600):
    """The default policy's verdicts on windows of ``steps`` steps each (long steps, or
    ``report_time_interval=0``), the first ``most`` of them."""
    bounds = [(a, a + steps) for a in range(0, trace.steps - steps + 1, steps)][:most]
    return replay.direct_verdicts(trace, times, bounds, StragglerPolicy, tails=False)[0]


@pytest.mark.parametrize(("steps", "most"), [(1, 0), (10, 3)])
def test_windows_of_few_steps_confirm_few_healthy_ranks(steps, most):
    # Measured over every trace and its subsets (docs/policy.md, "Windows of few steps"): one
    # step per window confirmed a healthy rank 964 times in 7,200 reports before
    # `spread_min_steps` and `evidence_full_steps`, none after; 10 steps 74 in 3,750, then 7.
    new = 0
    for trace in TRACES:
        confirmed = _few_step_verdicts(trace, trace.times_ms, steps)
        before = [frozenset(), *confirmed[:-1]]
        new += sum(len(c - p) for p, c in zip(before, confirmed, strict=True))
    assert new <= most


def test_a_20_percent_straggler_in_windows_of_10_steps_is_confirmed_within_8_reports():
    # Measured: 3-7 reports (2-4 before, with the false alarms above).
    for trace in TRACES:
        times = replay.inject(trace, [(0, trace.steps)], replay.Injection(1, 1.2, onset=0))
        confirmed = _few_step_verdicts(trace, times, 10, most=40)
        assert any(1 in c for c in confirmed[:8]), (trace.name, confirmed[:8])
        assert not any(c - {1} for c in confirmed), trace.name
