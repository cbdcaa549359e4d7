"""benchmarks/report_schedule.py's options: the phase sweep's policies by name, the online null."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import numpy as np
import report_schedule


def test_without_policies_the_sweep_compares_before_and_after_early_confirm_span():
    made = {name: make() for name, make in report_schedule._sweep_policies().items()}
    assert [p.config.early_confirm_span for p in made.values()] == [0.0, 0.75]
    assert list(made)[1] == "default"


def test_a_policy_is_a_name_and_its_settings():
    made = report_schedule._sweep_policies(
        ["default:", "span 1:early_confirm_span=1.0,recent_evidence_weight=0.25"])
    assert list(made) == ["default", "span 1"]
    config = made["span 1"]().config
    assert (config.early_confirm_span, config.recent_evidence_weight) == (1.0, 0.25)
    assert made["default"]().config.early_confirm_span == 0.75


@pytest.mark.parametrize("spec, message", [
    ("no settings", r"`--policy 'no settings'` must be NAME:SETTING=VALUE"),
    ("x:no_such_setting=1", r"`--policy 'x:no_such_setting=1'`: .*no_such_setting"),
    ("x:early_confirm_span=-1", r"`early_confirm_span=-1` must be"),
    ("x:early_confirm_span=one", r"`--policy 'x:early_confirm_span=one'`"),
])
def test_a_bad_policy_stops_before_the_sweep_naming_it(spec, message):
    with pytest.raises(SystemExit, match=message):
        report_schedule._sweep_policies([spec])


def test_a_policy_may_set_the_early_cadence_for_its_runs_only():
    import straggler.report_cycle as cycle

    made = report_schedule._sweep_policies(["min 40:MIN_EARLY_STEPS=40,early_confirm_span=1.0"])
    policy = made["min 40"]
    assert policy.cadence == {"MIN_EARLY_STEPS": 40}
    assert policy().config.early_confirm_span == 1.0
    seen = report_schedule._with_cadence(policy.cadence, lambda: cycle.early_window(300))
    assert seen == 45 and cycle.MIN_EARLY_STEPS == 50  # 0.15 x 300; restored after
    assert report_schedule._with_cadence(policy.cadence, lambda: cycle.early_window(80)) == 40


def test_the_sweep_onsets_are_the_same_seconds_at_every_interval():
    assert report_schedule.sweep_onsets(5.0) == (6.0, 10.0)
    assert report_schedule.sweep_onsets(10.0) == (3.0, 5.0)


def test_the_empirical_null_names_a_rank_whose_sums_leave_the_healthy_ones():
    # --only null: 3 ranks, 1 section, 1 % noise per window; rank 2 10 % slower from window 20.
    rng = np.random.default_rng(0)
    stat = 0.01 * rng.standard_normal((30, 3, 1))
    assert report_schedule._null_verdicts(stat, 3, 6.0, 10) == {}
    stat[20:, 2] += np.log(1.1)
    named = report_schedule._null_verdicts(stat, 3, 6.0, 10)
    assert set(named) == {2} and 20 <= named[2] <= 22, named
