"""The policy on recorded real runs: gloo traces (tests/data/traces) replayed through the real
report path (benchmarks/replay.py: host_summaries, one ReportGenerator per rank, apply_policy)
with stragglers injected, against the targets of docs/policy.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import replay
from straggler.analysis.policy import StragglerPolicy

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
