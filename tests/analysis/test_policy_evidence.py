"""The evidence inside each window (issue #19): the within-window standard error of each rank's
median (from its quartiles and the window's steps), the early suspects of the structure
warm-up, and the collective waits (culprits) as evidence. Synthetic, no process group."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from straggler.analysis.policy import (
    CULPRIT_METRIC,
    PolicyConfig,
    StragglerPolicy,
    culprit_shares,
    window_low,
    window_spread,
)
from straggler.analysis.statistics import Statistic

WORLD = 4
RANKS = np.arange(WORLD)


def _window(medians: np.ndarray, spread: float, steps: int = 200):
    """A gathered report's fields the policy reads: medians, quartiles (a log-spread of
    ``spread`` sigmas per step) and the reporting rank's step count."""
    half = 0.6745 * spread
    quartiles = {"step": {int(r): (m * math.exp(-half), m * math.exp(half))
                          for r, m in enumerate(medians)}}
    return types.SimpleNamespace(section_quartiles_ms=quartiles,
                                 local_section_summaries={"step": {Statistic.NUM: steps}})


def _feed(policy, medians, spread, steps=200, culprits=None, low=None):
    report = _window(medians, spread, steps)
    se = window_spread(report, RANKS)
    fast = None if low is None else {"section:step": low}
    return policy.update(RANKS, {"section:step": medians}, {"section:step": steps}, se,
                         culprits, fast)


def test_window_spread_is_the_standard_error_of_a_median_from_the_quartiles():
    report = _window(np.full(WORLD, 10.0), spread=0.1, steps=400)
    se = window_spread(report, RANKS)
    # sigma 0.1 per step, 400 steps: the median's standard error is 1.2533 * 0.1 / 20.
    assert se["section:step"] == pytest.approx(np.full(WORLD, 1.2533 * 0.1 / 20), rel=1e-3)
    assert se["section:step:p75"][0] > se["section:step"][0]  # a quartile is less certain
    # No step count, no standard error; a rank without quartiles gets NaN.
    assert window_spread(types.SimpleNamespace(section_quartiles_ms=report.section_quartiles_ms,
                                               local_section_summaries={}), RANKS) == {}
    del report.section_quartiles_ms["step"][3]
    assert math.isnan(window_spread(report, RANKS)["section:step"][3])


def test_a_10_percent_straggler_in_tight_windows_is_a_suspect_at_once_and_confirmed_early():
    policy = StragglerPolicy()
    medians = np.array([10.0, 10.05, 11.0, 9.95])
    decisions = [_feed(policy, medians, spread=0.1) for _ in range(3)]
    # The warm-up names the suspect from the first report (the early-report signal) ...
    assert decisions[0].suspects == {2} and not decisions[0].structure_ready
    # ... and its reports are judged once the groups are known: confirmed by the third.
    assert decisions[2].confirmed == {2}
    assert decisions[2].states[2].reasons == {"section:step": "relative"}


def test_a_warm_up_suspect_carries_its_reasons_and_slow_reports():
    # A suspect with no reason reads as a bug: every watched rank says why it is watched.
    policy = StragglerPolicy()
    medians = np.array([10.0, 10.05, 11.0, 9.95])
    first, second = (_feed(policy, medians, spread=0.1) for _ in range(2))
    for decision, count in ((first, 1), (second, 2)):
        state = decision.states[2]
        assert decision.suspects == {2} and not state.confirmed and state.reasons == {}
        assert state.suspected_on == {"section:step": "warm-up"}
        assert state.slow_reports == {"section:step": count}
    third = _feed(policy, medians, spread=0.1)  # the groups are learned: confirmed
    assert third.states[2].confirmed and third.states[2].reasons == {"section:step": "relative"}
    assert third.states[2].suspected_on == {}


def test_a_suspect_after_the_warm_up_names_the_rule_that_counted_it_slow():
    policy = StragglerPolicy()
    healthy = np.array([10.0, 10.05, 10.0, 9.95])
    for _ in range(4):
        _feed(policy, healthy, spread=0.1)
    decision = _feed(policy, np.array([10.0, 10.05, 11.0, 9.95]), spread=0.1)
    assert decision.suspects == {2}, decision
    state = decision.states[2]
    assert not state.confirmed and state.suspected_on == {"section:step": "relative"}
    assert state.slow_reports == {"section:step": 1}


def test_the_same_shift_in_wide_windows_is_not_enough():
    policy = StragglerPolicy()
    medians = np.array([10.0, 10.05, 11.0, 9.95])
    # Steps 2x noisier than their median and only 20 of them: 10 % is within the window's noise.
    decisions = [_feed(policy, medians, spread=2.0, steps=20) for _ in range(6)]
    assert all(not d.confirmed for d in decisions)
    assert decisions[0].suspects == frozenset()


def test_without_the_window_evidence_the_pooled_noise_decides_as_before():
    off = PolicyConfig(window_noise_factor=0.0, report_noise_weight=1.0)
    rng = np.random.default_rng(3)
    policy = StragglerPolicy(off)
    for i in range(12):
        medians = 10.0 * np.exp(0.01 * rng.standard_normal(WORLD))
        if i >= 6:
            medians[1] *= 1.3
        decision = _feed(policy, medians, spread=0.1)
    assert decision.confirmed == {1}


def test_culprit_reports_confirm_a_rank_slow_outside_every_section():
    policy = StragglerPolicy()
    medians = np.full(WORLD, 10.0)
    shares = {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.25}
    first = _feed(policy, medians, 0.1, culprits=shares)
    assert first.suspects == {3} and not first.confirmed  # one report is not enough
    second = _feed(policy, medians, 0.1, culprits=shares)
    assert second.confirmed == {3}
    assert second.states[3].reasons == {CULPRIT_METRIC: "culprit"}
    # It clears once the others stop waiting for it.
    healthy = dict.fromkeys(range(WORLD), 0.0)
    later = [_feed(policy, medians, 0.1, culprits=healthy) for _ in range(2)]
    assert later[-1].confirmed == frozenset() and later[-1].cleared == {3}


def test_two_culprits_at_once_are_structure_not_a_lone_straggler():
    policy = StragglerPolicy()
    medians = np.full(WORLD, 10.0)
    shares = {0: 0.0, 1: 0.0, 2: 0.25, 3: 0.25}  # a heavier pipeline stage of two ranks
    decisions = [_feed(policy, medians, 0.1, culprits=shares) for _ in range(5)]
    assert all(not d.confirmed and not d.suspects for d in decisions)


def test_culprit_evidence_can_be_turned_off_and_is_read_from_a_report():
    policy = StragglerPolicy(PolicyConfig(culprit_full_share=0.0))
    shares = {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.2}
    decisions = [_feed(policy, np.full(WORLD, 10.0), 0.1, culprits=shares) for _ in range(4)]
    assert all(not d.confirmed for d in decisions)
    report = types.SimpleNamespace(waits={0: None, 1: None, 5: None},
                                   culprits=(types.SimpleNamespace(rank=5, share=0.3),))
    assert culprit_shares(report) == {0: 0.0, 1: 0.0, 5: 0.3}
    assert culprit_shares(types.SimpleNamespace()) == {}


@pytest.mark.parametrize("kwargs, match", [
    ({"window_noise_factor": -1.0}, r"`window_noise_factor=-1.0`"),
    ({"report_noise_weight": -0.5}, r"`report_noise_weight=-0.5`"),
    ({"tail_min_effect": -0.1}, r"`tail_min_effect=-0.1`"),
    ({"culprit_full_share": 2.0}, r"`culprit_full_share=2.0`"),
    ({"culprit_full_steps": -1.0}, r"`culprit_full_steps=-1.0`"),
    ({"fast_steps": "yes"}, r"`fast_steps='yes'`"),
    ({"fast_window_noise_factor": -1.0}, r"`fast_window_noise_factor=-1.0`"),
    ({"fast_report_noise_weight": -0.5}, r"`fast_report_noise_weight=-0.5`"),
    ({"confirm_slow_only": "yes"}, r"`confirm_slow_only='yes'`"),
])
def test_bad_evidence_settings_name_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PolicyConfig(**kwargs)


def test_a_mild_culprit_needs_more_reports_than_a_heavy_one():
    policy = StragglerPolicy()
    shares = {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.08}  # 8 % of the job's time: 1.1 per report
    decisions = [_feed(policy, np.full(WORLD, 10.0), 0.1, culprits=shares) for _ in range(6)]
    assert [bool(d.confirmed) for d in decisions] == [False] * 5 + [True]


def test_culprit_reports_of_short_windows_need_more_of_them():
    # A clean demo run on a loaded host confirmed a healthy rank from two culprit reports of
    # 29-35 steps; a 30-step window carries sqrt(30 / 150) of a full window's evidence.
    shares = {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.25}
    short = StragglerPolicy()
    decisions = [_feed(short, np.full(WORLD, 10.0), 0.1, steps=30, culprits=shares)
                 for _ in range(6)]
    # 4 * sqrt(0.2) - 0.5 = 1.29 per report: the fifth reaches 6.
    assert [bool(d.confirmed) for d in decisions] == [False] * 4 + [True] * 2
    uncapped = StragglerPolicy(PolicyConfig(culprit_full_steps=0.0))
    decisions = [_feed(uncapped, np.full(WORLD, 10.0), 0.1, steps=30, culprits=shares)
                 for _ in range(2)]
    assert [bool(d.confirmed) for d in decisions] == [False, True]


# ------------------------------------------------------------------- the fast steps (#19)
MEDIANS = np.array([10.0, 10.05, 11.0, 9.95])  # rank 2: its median 10 % behind its peers'


def test_a_rank_whose_fast_steps_keep_pace_is_not_a_straggler():
    # Interference (descheduling, a busy neighbour) lengthens some of a healthy rank's steps:
    # its median moves, its fastest steps (the window's 5th percentile) do not.
    policy = StragglerPolicy()
    decisions = [_feed(policy, MEDIANS, spread=0.1, low=np.full(WORLD, 8.0)) for _ in range(6)]
    assert all(not d.confirmed for d in decisions)
    assert all(not d.suspects for d in decisions[3:])


def test_a_rank_slower_in_every_step_is_confirmed_as_before():
    policy = StragglerPolicy()
    low = 0.8 * MEDIANS  # the fast steps 10 % behind as well
    decisions = [_feed(policy, MEDIANS, spread=0.1, low=low) for _ in range(3)]
    assert decisions[2].confirmed == {2}
    # Without fast steps (an older peer's report, a GPU score) the median alone decides.
    policy = StragglerPolicy()
    decisions = [_feed(policy, MEDIANS, spread=0.1) for _ in range(3)]
    assert decisions[2].confirmed == {2}


def test_fast_steps_can_be_turned_off_and_are_read_from_a_report():
    policy = StragglerPolicy(PolicyConfig(fast_steps=False))
    decisions = [_feed(policy, MEDIANS, spread=0.1, low=np.full(WORLD, 8.0)) for _ in range(3)]
    assert decisions[2].confirmed == {2}
    report = types.SimpleNamespace(section_low_ms={"step": {0: 8.0, 3: 9.0}, "idle": {}})
    low = window_low(report, RANKS)
    assert list(low) == ["section:step"]
    np.testing.assert_array_equal(low["section:step"], [8.0, np.nan, np.nan, 9.0])
    assert window_low(types.SimpleNamespace(), RANKS) == {}
